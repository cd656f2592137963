import type { AuditStore } from '../audit/audit-store.js';
import { authenticateCookie } from '../session/resolve-session.js';
import type { SessionContext } from '../session/session-context.js';
import { normalizeEmail, type User } from '../session/user-directory.js';
import type { OrganizationStore } from './organization-store.js';
import type { TeamDirectory } from '../session/team-directory.js';

/** Why an organisation admin operation changed nothing. */
export type OrganizationRefusal = 'unauthenticated' | 'not_found' | 'last_admin';

/** An organisation admin operation's outcome: data, never an exception for an expected refusal. */
export type OrganizationResult<T> = { ok: true; value: T } | { ok: false; reason: OrganizationRefusal };

/** Who administers organisations, and how their admins change: `team.organizations` of the session service. */
export interface OrganizationAdmins {
  /** The organisation's admins, for one of them; `not_found` for anyone else (no such organisation alike). */
  list(cookieHeader: string | null | undefined, organization: string): Promise<OrganizationResult<User[]>>;
  /**
   * One of its admins makes the user with `email` an admin of the organisation too: someone with an
   * account who is a member of one of its projects already (never a stranger, nor anyone of another
   * tenant: whether such an address has an account is not said).
   */
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
    // An organisation with no project administers nothing (and no trail would record a change).
    const projects = administered.includes(organization) ? await organizations.projects(organization) : [];
    if (projects.length === 0) return { ok: false as const, reason: 'not_found' as const };
    return { ok: true as const, account: current.account, sessionId: current.record.id, projects };
  };
  const usersOf = async (ids: readonly string[]) =>
    (await Promise.all(ids.map((id) => context.directory.getAccount(id))))
      .filter((account) => account !== null)
      .map((account) => account.user);
  /**
   * Records a change in every project of the organisation, after it was made; a trail that cannot
   * record it undoes it (`undo`) and throws: no admin changes unrecorded.
   */
  const record = async (
    organization: string,
    by: { account: { user: User }; sessionId: string; projects: readonly string[] },
    change: { type: string; user: User; undo: () => Promise<unknown> },
  ) => {
    if (!audit) return;
    const at = context.now();
    const { type, user } = change;
    const recorded: string[] = [];
    const event = (projectKey: string, eventType: string) => ({
      projectKey,
      type: eventType,
      actor: by.account.user.email,
      session: by.sessionId,
      subject: user.id,
      data: { organization, email: user.email },
      at,
    });
    try {
      for (const projectKey of by.projects) {
        await audit.append(event(projectKey, type));
        recorded.push(projectKey);
      }
    } catch (error) {
      await change.undo().catch(() => {});
      // The projects that recorded the change hear it was undone (as far as their trails still take it).
      for (const projectKey of recorded) await audit.append(event(projectKey, `${type}-undone`)).catch(() => {});
      throw error;
    }
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
      const found = await directory.findUserByEmail(normalizeEmail(email));
      const account = found && (await context.directory.getAccount(found.id));
      const user = account?.user;
      if (!user || !account.memberships.some((membership) => by.projects.includes(membership.projectKey)))
        return { ok: false, reason: 'not_found' };
      if ((await organizations.admins(organization)).includes(user.id)) return { ok: true, value: user };
      await organizations.setAdmin(organization, user.id, true);
      // Undone atomically: never leaving the organisation without an admin (one who left meanwhile).
      const undo = () => organizations.removeAdmin(organization, user.id);
      await record(organization, by, { type: 'organization-admin-added', user, undo });
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
      const undo = () => organizations.setAdmin(organization, userId, true);
      await record(organization, by, { type: 'organization-admin-removed', user, undo });
      return { ok: true, value: null };
    },
  };
}
