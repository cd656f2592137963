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

/** The signed-in admin of an organisation, as {@link OrganizationAdmins.authorize} answers. */
export interface OrganizationCaller {
  user: User;
  /** The session they act from: the trail names it. */
  sessionId: string;
  /** The organisation's projects (never none): a change is recorded in each one's trail. */
  projects: string[];
}

/** A change to an organisation, for {@link recordOrganizationChange}: what the trail says of it, and how to undo it. */
export interface OrganizationChange {
  /** The audit event's type (`organization-admin-added`, `sso-connection-created`…); `<type>-undone` when undone. */
  type: string;
  /** What it changed: a user's id, a connection's id. */
  subject: string;
  /** The rest of the record (never a secret); `organization` is added. */
  data: Record<string, string | number | boolean | string[]>;
  /** Puts things back as they were before the change; rejects when it could not. */
  undo: () => Promise<unknown>;
}

/**
 * Records a change an organisation's admin made in the trail of every project of the organisation,
 * after it was made: a trail that cannot record it undoes the change (`undo`), tells the projects
 * that had recorded it that it was undone (`<type>-undone`, or `<type>-undo-failed` when the undo
 * rejected), and throws. No organisation changes unrecorded.
 */
export async function recordOrganizationChange(
  audit: AuditStore | undefined,
  organization: string,
  by: OrganizationCaller,
  change: OrganizationChange,
  at: number,
): Promise<void> {
  if (!audit) return;
  const recorded: string[] = [];
  const event = (projectKey: string, type: string) => ({
    projectKey,
    type,
    actor: by.user.email,
    session: by.sessionId,
    subject: change.subject,
    data: { organization, ...change.data },
    at,
  });
  try {
    for (const projectKey of by.projects) {
      await audit.append(event(projectKey, change.type));
      recorded.push(projectKey);
    }
  } catch (error) {
    const undone = await change.undo().then(
      () => true,
      () => false,
    );
    // The projects that recorded the change hear whether it was undone (as far as their trails still
    // take it): an undo that failed (the thing changed again meanwhile) is said, never passed off as done.
    const outcome = undone ? 'undone' : 'undo-failed';
    for (const projectKey of recorded)
      await audit.append(event(projectKey, `${change.type}-${outcome}`)).catch(() => {});
    throw error;
  }
}

/** Who administers organisations, and how their admins change: `team.organizations` of the session service. */
export interface OrganizationAdmins {
  /**
   * The signed-in admin of `organization`, with its projects: what another module's organisation routes
   * ask first (single sign-on's connections). `not_found` for anyone else, as for `list`.
   */
  authorize(
    cookieHeader: string | null | undefined,
    organization: string,
  ): Promise<OrganizationResult<OrganizationCaller>>;
  /** The organisation's projects (none for no such organisation): what a sign-in through its own provider may open. */
  projects(organization: string): Promise<string[]>;
  /** The organisation a project belongs to, or null: whose sign-in rules hold for a session there. */
  organizationOf(projectKey: string): Promise<string | null>;
  /** Whether the user is one of the organisation's admins (no session needed: for the service's own checks). */
  isAdmin(organization: string, userId: string): Promise<boolean>;
  /** The user ids of the organisation's admins (no session needed: for the service's own checks). */
  adminIds(organization: string): Promise<string[]>;
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
  /**
   * The user is an admin of the organisation no longer on its directory's word (a SCIM deprovisioning),
   * even its last one: an organisation left without admins gets its first ones from the operator's
   * configuration again. Recorded in each of its projects' trails (`organization-admin-revoked`, by
   * the system, with `reason`); false when they were not one.
   */
  revoke(organization: string, userId: string, reason: string): Promise<boolean>;
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
    return {
      ok: true as const,
      user: current.account.user,
      sessionId: current.record.id,
      projects: [...projects],
    } satisfies OrganizationCaller & { ok: true };
  };
  const usersOf = async (ids: readonly string[]) =>
    (await Promise.all(ids.map((id) => context.directory.getAccount(id))))
      .filter((account) => account !== null)
      .map((account) => account.user);
  /** Records an admin change in every project's trail; undoes it when a trail cannot. */
  const record = (
    organization: string,
    by: OrganizationCaller,
    change: { type: string; user: User; undo: () => Promise<unknown> },
  ) =>
    recordOrganizationChange(
      audit,
      organization,
      by,
      { type: change.type, subject: change.user.id, data: { email: change.user.email }, undo: change.undo },
      context.now(),
    );
  /**
   * Ends a former admin's sessions in the organisation's projects (but `keep`, the session removing
   * itself): they were let in on rights they no longer hold (an organisation's break-glass).
   */
  const endSessionsIn = async (organization: string, userId: string, keep?: string) => {
    const projects = new Set(await organizations.projects(organization));
    for (const session of await context.store.listByUser(userId))
      if (projects.has(session.projectKey) && session.id !== keep) await context.store.delete(session.id);
  };
  return {
    projects: async (organization) => [...(await organizations.projects(organization))],
    adminIds: (organization) => organizations.admins(organization),
    organizationOf: (projectKey) => organizations.organizationOf(projectKey),
    isAdmin: async (organization, userId) => (await organizations.administeredBy(userId)).includes(organization),
    async authorize(cookieHeader, organization) {
      const by = await caller(cookieHeader, organization);
      if (!by.ok) return by;
      const { ok: _, ...value } = by;
      return { ok: true, value };
    },
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
      await endSessionsIn(organization, userId, by.sessionId);
      return { ok: true, value: null };
    },
    async revoke(organization, userId, reason) {
      if (!(await organizations.admins(organization)).includes(userId)) return false;
      await organizations.setAdmin(organization, userId, false);
      await endSessionsIn(organization, userId);
      const at = context.now();
      for (const projectKey of await organizations.projects(organization))
        await audit?.append({
          projectKey,
          type: 'organization-admin-revoked',
          actor: null,
          session: null,
          subject: userId,
          data: { organization, reason },
          at,
        });
      return true;
    },
  };
}
