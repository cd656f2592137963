// What every recipe serves: Deskpilot's session and chat handlers on memory stores, the demo users,
// backends and model — assembled once here, so that the recipes hold only their stack's glue.
import {
  createChatHandler,
  createMemorySessionStore,
  createMemoryUserDirectory,
  createSessionHandler,
  createSessionService,
  type HttpRequest,
  type Session,
} from '@deskpilot/core';
import { createMemoryApprovalStore, createMemoryChatStore, type HostChatContext } from '@deskpilot/core/chat';
import {
  createMemoryInvitationStore,
  createMemoryRolePolicyStore,
  type SessionTeam,
  createTeamModule,
} from '@deskpilot/core/team';
import { createDemoCommerceBackend, createDemoModel, createDemoTicketBackend, demoUsers } from '@deskpilot/core/demo';

/** The studio's origin in the suite: the one page allowed to call both services. */
export const studioOrigin = 'http://studio.test';

/** The chat's bounds in the suite: small, so that the suite meets them. */
export const chatPolicy = { stepBudget: 2, user: { limit: 20, windowMs: 60_000 } } as const;

/**
 * Who is asking, from the host's own session — never from the body: identity, project and role, and
 * the flags the project's role policy gives that role (the built-in least privilege — admins refund,
 * cancel and work tickets; agents work tickets; viewers read — until its admins change it).
 */
export async function chatContextOf(team: SessionTeam, session: Session): Promise<HostChatContext> {
  const flags = await team.capabilitiesFor(session.projectKey, session.role);
  return {
    userEmail: session.user.email,
    projectKey: session.projectKey,
    userRole: session.role,
    businessType: session.projectKey.endsWith('-b2b') ? 'b2b' : 'b2c',
    ...(flags as Record<`can${string}`, boolean>),
  };
}

export async function createDeskpilot() {
  // A low scrypt cost: the suite signs in a dozen times per host.
  const passwordHash = { cost: 1024 };
  const directory = createMemoryUserDirectory({ passwordHash });
  for (const user of demoUsers) await directory.addUser(user);
  const sessions = createSessionService({
    store: createMemorySessionStore(),
    directory,
    passwordHash,
    cookie: { secure: false },
    // Roles decide capabilities: each project's policy, kept and changed by its admins.
    modules: [
      createTeamModule({
        directory,
        invitations: createMemoryInvitationStore(),
        policies: createMemoryRolePolicyStore(),
      }),
    ],
  });
  const sessionHandler = createSessionHandler({ service: sessions, allowedOrigins: [studioOrigin] });
  const chatHandler = createChatHandler({
    store: createMemoryChatStore(),
    approvalStore: createMemoryApprovalStore(),
    models: { fallback: createDemoModel() },
    commerce: createDemoCommerceBackend(),
    tickets: createDemoTicketBackend(),
    // The chat is served beside the session routes: identity and flags come from the session cookie.
    resolveContext: async (request: HttpRequest) => {
      const resolved = await sessions.resolve(request.headers.get('cookie'));
      return resolved && chatContextOf(sessions.modules.team, resolved.session);
    },
    stepBudget: chatPolicy.stepBudget,
    limits: { user: { policy: chatPolicy.user } },
    allowedOrigins: [studioOrigin],
  });
  return { sessions, sessionHandler, chatHandler };
}

export type Deskpilot = Awaited<ReturnType<typeof createDeskpilot>>;
