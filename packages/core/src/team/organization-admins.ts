import type { AuditStore } from '../audit/audit-store.js';
import { authenticateCookie } from '../session/resolve-session.js';
import type { SessionContext } from '../session/session-context.js';
import { normalizeEmail, type User } from '../session/user-directory.js';
import type { OrganizationStore } from './organization-store.js';
import type { TeamDirectory } from './team-directory.js';

/** Why an organisation admin operation changed nothing. */
export type OrganizationRefusal = 'unauthenticated' | 'not_found' | 'last_admin';

/** An organisation admin operation's outcome: data, never an exception for an expected refusal. */
export type OrganizationResult<T> = { ok: true; value: T } | { ok: false; reason: OrganizationRefusal };

/** Who administers organisations, and how their admins change: `team.organizations` of the session service. */
export interface OrganizationAdmins {
  /** The organisation's admins, for one of them; `not_found` for anyone else (no such organisation alike). */
  list(cookieHeader: string | null | undefined, organization: string): Promise<OrganizationResult<User[]>>;
  /** One of its admins makes the user with `email` (an account already) an admin of the organisation too. */
  add(cookieHeader: string | null | undefined, organization: string, email: string): Promise<OrganizationResult<User>>;
  /** One of its admins makes another (or themself) an admin no longer; never its last one. */
  remove(
    cookieHeader: string | null | undefined,
    organization: string,
    userId: string,
  ): Promise<OrganizationResult<null>>;
}

/** What {@link createOrganizationAdmins} works on: the session service's context, stores and trail. */
export interface OrganizationAdminsDependencies {
  context: SessionContext;
  organizations: OrganizationStore;
  directory: Pick<TeamDirectory, 'findUserByEmail'>;
  audit: AuditStore | undefined;
}

/**
 * The organisation admin operations: only an organisation's admins see or change its admins (the first
 * ones are placed by configuration, as the reference server's ORGANIZATIONS does); each change lands in
 * the audit trail of every project of the organisation, naming who made it and from which session.
 */
export function createOrganizationAdmins(dependencies: OrganizationAdminsDependencies): OrganizationAdmins {
  const { context, organizations, directory, audit } = dependencies;
  /** The signed-in admin of `organization`, or why not. */
  const caller = async (cookieHeader: string | null | undefined, organization: string) => {
    const current = await authenticateCookie(cookieHeader, context);
    if (!current) return { ok: false as const, reason: 'unauthenticated' as const };
    const administered = await organizations.administeredBy(current.account.user.id);
    if (!administered.includes(organization)) return { ok: false as const, reason: 'not_found' as const };
    return { ok: true as const, account: current.account, sessionId: current.record.id };
  };
  const usersOf = async (ids: readonly string[]) =>
    (await Promise.all(ids.map((id) => context.directory.getAccount(id))))
      .filter((account) => account !== null)
      .map((account) => account.user);
  const record = async (
    organization: string,
    by: { account: { user: User }; sessionId: string },
    type: string,
    user: User,
  ) => {
    if (!audit) return;
    const at = context.now();
    for (const projectKey of await organizations.projects(organization))
      await audit.append({
        projectKey,
        type,
        actor: by.account.user.email,
        session: by.sessionId,
        subject: user.id,
        data: { organization, email: user.email },
        at,
      });
  };
  return {
    async list(cookieHeader, organization) {
      const by = await caller(cookieHeader, organization);
      if (!by.ok) return by;
      return { ok: true, value: await usersOf(await organizations.admins(organization)) };
    },
    async add(cookieHeader, organization, email) {
      const by = await caller(cookieHeader, organization);
      if (!by.ok) return by;
      const user = await directory.findUserByEmail(normalizeEmail(email));
      if (!user) return { ok: false, reason: 'not_found' };
      if ((await organizations.admins(organization)).includes(user.id)) return { ok: true, value: user };
      await organizations.setAdmin(organization, user.id, true);
      await record(organization, by, 'organization-admin-added', user);
      return { ok: true, value: user };
    },
    async remove(cookieHeader, organization, userId) {
      const by = await caller(cookieHeader, organization);
      if (!by.ok) return by;
      const [user] = await usersOf([userId]);
      if (!user) return { ok: false, reason: 'not_found' };
      const removed = await organizations.removeAdmin(organization, userId);
      if (removed === 'last_admin') return { ok: false, reason: 'last_admin' };
      if (removed === 'not_admin') return { ok: false, reason: 'not_found' };
      await record(organization, by, 'organization-admin-removed', user);
      return { ok: true, value: null };
    },
  };
}
