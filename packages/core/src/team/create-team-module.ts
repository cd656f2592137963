import { DeskpilotError } from '../errors/deskpilot-error.js';
import { bindRoutes } from '../routes/route-table.js';
import { signInRequiredError } from '../session/sign-in-required.js';
import type { SessionModule } from '../session/session-service.js';
import { createTeamAdmin, type TeamOptions } from './create-team-admin.js';
import type { SessionTeam } from './session-team.js';

export type { SessionTeam } from './session-team.js';
import { servedOrganizationRoutes } from './organization-routes.js';
import { servedTeamRoutes } from './team-routes.js';

/**
 * The team module of the session service: a project's admins list members, change roles, remove
 * members, invite by email, keep role policies and read the audit trail (the routes under
 * `/sessions/team/…`, `/sessions/organizations…`, `/sessions/current/capabilities` and
 * `/sessions/invitations/accept`); an invitation accepted without an account signs its new owner in
 * through the kernel's one way in. Its API is `service.modules.team`.
 *
 * @example
 * const sessions = createSessionService({
 *   store, directory, audit,
 *   modules: [createTeamModule({ directory, invitations: createMemoryInvitationStore() })],
 * });
 */
export function createTeamModule(options: TeamOptions): SessionModule<'team', SessionTeam> {
  return {
    name: 'team',
    create(kernel) {
      const admin = createTeamAdmin(options, {
        context: kernel.context,
        audit: kernel.audit,
        hashPassword: kernel.hashPassword,
        admit: kernel.admit,
      });
      const team: SessionTeam = {
        ...admin,
        async acceptAsNewAccount(input, cookieHeader, client) {
          const accepted = await admin.acceptAsNewAccount(input);
          if (!accepted.ok) return accepted;
          const started = await kernel.startSession(accepted.value, {
            projectKey: accepted.value.memberships[0]?.projectKey,
            cookieHeader,
            method: 'invitation',
            client,
          });
          // Its organisation signs its members in at its identity provider: the account is theirs, the
          // session is the provider's to give.
          if (!started.ok && started.reason === 'sso_required') throw signInRequiredError(started);
          // The account has its one membership: a refusal here is a store that changed under us.
          if (!started.ok)
            throw new DeskpilotError('conflict', { detail: 'The new account could not sign in. Try signing in.' });
          return { ok: true, value: started };
        },
      };
      return {
        api: team,
        routes: (deps) => bindRoutes([...servedTeamRoutes, ...servedOrganizationRoutes], { ...deps, team }),
        deleteExpired: (now) => options.invitations.deleteExpired(now),
      };
    },
  };
}
