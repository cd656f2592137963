import * as base64url from 'jose/base64url';
import {
  verifyAuditChain,
  type AuditEvent,
  type AuditQuery,
  type AuditRecord,
  type AuditStore,
  type AuditVerification,
} from '../audit/audit-store.js';
import type { EmailMessage, EmailSender } from '../session/email-sender.js';
import { authenticateCookie } from '../session/resolve-session.js';
import type { SessionContext } from '../session/session-context.js';
import type { Admission, SessionAdmission } from '../session/session-service.js';
import { signInRequiredError } from '../session/sign-in-required.js';
import { isLive, toSessionSummary, type SessionSummary } from '../session/session-summary.js';
import { normalizeEmail, type Account, type Membership } from '../session/user-directory.js';
import type { InvitationRecord, InvitationStore } from './invitation-store.js';
import type { OrganizationStore } from './organization-store.js';
import { createOrganizationAdmins, type OrganizationAdmins } from './organization-admins.js';
import { builtinCapabilities, type CapabilityRegistry } from '../capabilities/capabilities.js';
import {
  capabilitiesOf,
  defaultRolePolicy,
  type RolePolicy,
  type RolePolicyStore,
  type StoredRolePolicy,
} from './role-policy.js';
import type {
  MembershipChange,
  MembershipChangeResult,
  ProjectMember,
  TeamDirectory,
} from '../session/team-directory.js';

/** Options of the session service's `team`: memberships and invitations administered by a project's admins. */
export interface TeamOptions {
  /** Where memberships change: the shipped directories (memory, Postgres, SQLite) are one. */
  directory: TeamDirectory;
  invitations: InvitationStore;
  /** The roles an admin may give. @default ["admin", "agent", "viewer"] */
  roles?: readonly string[];
  /** The role that administers a project (and that a project always keeps one holder of). @default "admin" */
  adminRole?: string;
  /** How long an invitation works. @default 604_800_000 (7 days) */
  invitationTtlMs?: number;
  /**
   * Sends each invitation to the invitee. Without it, the token (and `invitationLink`'s page) is
   * answered once to the admin who invited, to pass on.
   */
  email?: EmailSender;
  /**
   * The page an invitation opens, given its token; put the token in the fragment (`#invitation=…`): a
   * fragment never reaches a server's log or another site's `Referer`. Required with `email`.
   */
  invitationLink?: (token: string) => string;
  /** Most pending invitations a project holds; past it, inviting is refused until some are used or revoked. @default 500 */
  maxPendingInvitations?: number;
  /** Shortest password of an account made by accepting an invitation. @default 8 */
  minPasswordLength?: number;
  /**
   * Where each project's role policy (role → capability flags) is kept, editable by its admins.
   * Without it every project has `defaultRolePolicy`, and the policy cannot be changed.
   */
  policies?: RolePolicyStore;
  /** The capability flags a policy may name. @default builtinCapabilities */
  capabilities?: CapabilityRegistry;
  /**
   * Organisations above projects: an admin of a project's organisation administers the project too,
   * member of it or not. Without it, only a project's own admins do.
   */
  organizations?: OrganizationStore;
  /** The product's name in the invitation. @default "Deskpilot" */
  appName?: string;
}

/** An admin signed in, acting on one project they administer. */
export interface TeamCaller {
  projectKey: string;
  account: Account;
  /** Their membership in the project; null for an admin of its organisation who is not a member. */
  membership: Membership | null;
  /** The organisation whose admin they act as, when they are not the project's own admin. */
  organization: string | null;
  sessionId: string;
}

/** An invitation as an admin sees it: never its token or digest. */
export type InvitationSummary = Omit<InvitationRecord, 'tokenHash'>;

/** Why a team operation changed nothing. */
export type TeamRefusal =
  | 'unauthenticated'
  /** The caller is a member of the project but not its admin. */
  | 'forbidden'
  /** No such project for this caller (not a member there), or no such member or invitation. */
  | 'not_found'
  | 'last_admin'
  | 'already_member'
  | 'invalid_role'
  | 'invalid_token'
  /** The invitation is for another address than the signed-in user's. */
  | 'wrong_account'
  /** The invitation's address has an account: sign in with it, then accept. */
  | 'sign_in_first'
  | 'weak_password'
  /** The client named is not one of the project's. */
  | 'invalid_client'
  | 'too_many_invitations'
  /** The policy changed since the version the admin read. */
  | 'conflict'
  | 'busy';

/** A team operation's outcome: data, never an exception for an expected refusal. */
export type TeamResult<T> = { ok: true; value: T } | { ok: false; reason: TeamRefusal };

/** What the team needs of the session service. */
export interface TeamDependencies {
  context: SessionContext;
  audit: AuditStore | undefined;
  /** Hashes a new account's password through the service's hash gate: `busy` when it is full. */
  hashPassword: (password: string) => Promise<string | 'busy'>;
  /** The modules' answer to a session acting in a project (`kernel.admit`). @default every session let in */
  admit?: ((request: SessionAdmission) => Promise<Admission>) | undefined;
}

/** Team administration over the session service's stores (see {@link TeamOptions}). */
export interface TeamAdmin {
  readonly roles: readonly string[];
  /** The capability flags a policy may name, with their kinds. */
  readonly capabilities: CapabilityRegistry;
  readonly adminRole: string;
  /** Shortest password of an account made by accepting an invitation. */
  readonly minPasswordLength: number;
  /** The cookie's user, as an admin of `projectKey`: `not_found` when not a member there, `forbidden` when not its admin. */
  authorize(cookieHeader: string | null | undefined, projectKey: string): Promise<TeamResult<TeamCaller>>;
  listMembers(caller: TeamCaller): Promise<ProjectMember[]>;
  /** Sets a member's role in the caller's project; refuses to leave it without an admin. */
  changeRole(caller: TeamCaller, userId: string, role: string): Promise<TeamResult<ProjectMember>>;
  /** Removes a member from the caller's project: their sessions there end at their next request. */
  removeMember(caller: TeamCaller, userId: string): Promise<TeamResult<null>>;
  /** Invites an address with a role: emailed when the team has `email`, else the token is answered once. */
  invite(
    caller: TeamCaller,
    input: { email: string; role: string; clientId?: string | undefined },
  ): Promise<TeamResult<{ invitation: InvitationSummary; token?: string; link?: string }>>;
  listInvitations(caller: TeamCaller): Promise<InvitationSummary[]>;
  revokeInvitation(caller: TeamCaller, id: string): Promise<TeamResult<null>>;
  /** The signed-in user joins the invitation's project; the invitation must be for their address. */
  acceptInvitation(cookieHeader: string | null | undefined, token: string): Promise<TeamResult<InvitationSummary>>;
  /** Someone without an account accepts: an account for the invited address, with this name and password. */
  acceptAsNewAccount(input: { token: string; name: string; password: string }): Promise<TeamResult<Account>>;
  /** A member's live sessions in the caller's project (where and when signed in, last seen); `not_found` for a non-member. */
  memberSessions(caller: TeamCaller, userId: string): Promise<TeamResult<SessionSummary[]>>;
  /**
   * Revokes a member's sessions in the caller's project: the one with `id`, or all of them. Resolves to
   * how many ended; `not_found` for a non-member, or an `id` that is not one of theirs there.
   */
  revokeMemberSessions(caller: TeamCaller, userId: string, id?: string): Promise<TeamResult<number>>;
  /** The organisations the cookie's user administers, each with its projects; null when signed out. */
  organizations(
    cookieHeader: string | null | undefined,
  ): Promise<Array<{ organization: string; projects: string[] }> | null>;
  /** The caller's project's role policy: the stored one, or the built-in one (`version` 0). */
  policy(caller: TeamCaller): Promise<StoredRolePolicy>;
  /**
   * Replaces the caller's project's role policy while its version is still `expectedVersion`
   * (`conflict` when another change came first); `not_found` when the team keeps no policies.
   */
  setPolicy(caller: TeamCaller, policy: RolePolicy, expectedVersion: number): Promise<TeamResult<StoredRolePolicy>>;
  /** The capability flags of a role in a project, under its policy now (what a chat context is built from). */
  capabilitiesFor(projectKey: string, role: string): Promise<Record<string, boolean>>;
  /** The caller's project's audit trail, newest first; null when the service keeps none. */
  auditLog(caller: TeamCaller, query: Omit<AuditQuery, 'projectKey'>): Promise<AuditRecord[] | null>;
  /** The whole trail of the caller's project up to its head, oldest first, a page at a time (what an export writes). */
  auditChain(caller: TeamCaller): AsyncIterable<AuditRecord> | null;
  /**
   * Walks the caller's project's whole trail: sound, or the first record edited, missing, unchained or rewritten
   * (`expectHead`: a head read earlier and kept elsewhere); null when the service keeps no trail,
   * `busy` while two walks run already (each reads a whole chain).
   */
  verifyAudit(
    caller: TeamCaller,
    expectHead?: { seq: number; hash: string },
  ): Promise<AuditVerification | null | 'busy'>;
  /** Who administers each organisation, changed by its admins; null without `organizations`. */
  readonly organizationAdmins: OrganizationAdmins | null;
}

const tokenPattern = /^[A-Za-z0-9_-]{43}$/;
/** Audit chains verified at once by one service: each walk reads a whole chain. */
const maxConcurrentWalks = 2;

/** What the team's operations share: the options, normalised once, and the service's stores. */
interface Team {
  options: TeamOptions;
  context: SessionContext;
  audit: AuditStore | undefined;
  directory: TeamDirectory;
  invitations: InvitationStore;
  roles: readonly string[];
  adminRole: string;
  ttlMs: number;
  minPasswordLength: number;
  hashPassword: TeamDependencies['hashPassword'];
  capabilities: CapabilityRegistry;
}

/** Creates the session service's {@link TeamAdmin}. */
export function createTeamAdmin(options: TeamOptions, dependencies: TeamDependencies): TeamAdmin {
  const roles = Object.freeze([...(options.roles ?? ['admin', 'agent', 'viewer'])]);
  const adminRole = options.adminRole ?? 'admin';
  if (!roles.includes(adminRole)) throw new TypeError(`team.roles must include the admin role "${adminRole}"`);
  if (options.email && !options.invitationLink) throw new TypeError('team.email needs team.invitationLink');
  const ttlMs = options.invitationTtlMs ?? 7 * 24 * 60 * 60 * 1000;
  if (!(ttlMs > 0) || !Number.isFinite(ttlMs)) throw new TypeError('team.invitationTtlMs must be a positive number');
  const team: Team = {
    options,
    context: dependencies.context,
    audit: dependencies.audit,
    directory: options.directory,
    invitations: options.invitations,
    roles,
    adminRole,
    ttlMs,
    minPasswordLength: options.minPasswordLength ?? 8,
    hashPassword: dependencies.hashPassword,
    capabilities: options.capabilities ?? builtinCapabilities,
  };
  const { context, audit } = team;
  let walks = 0;
  return {
    roles,
    capabilities: team.capabilities,
    adminRole,
    minPasswordLength: team.minPasswordLength,

    async authorize(cookieHeader, projectKey) {
      const current = await authenticateCookie(cookieHeader, context);
      if (!current) return { ok: false, reason: 'unauthenticated' };
      const { account } = current;
      const membership = account.memberships.find((candidate) => candidate.projectKey === projectKey) ?? null;
      const isAdmin = account.memberships.some(
        (candidate) => candidate.projectKey === projectKey && candidate.role === adminRole,
      );
      const caller = { projectKey, account, membership, sessionId: current.record.id };
      if (isAdmin) {
        // From a session active in another project: as if it switched there (an organisation that
        // requires its identity provider asks for a sign-in there first).
        if (current.record.projectKey !== projectKey) {
          const session = { id: current.record.id, signedInAt: current.record.createdAt };
          const admission = await dependencies.admit?.({ kind: 'switch', account, projectKey, cookieHeader, session });
          if (admission && !admission.ok) throw signInRequiredError(admission);
        }
        return { ok: true, value: { ...caller, organization: null } };
      }
      // An admin of the project's organisation administers it, member or not.
      const organization = await organizationAdministered(team, projectKey, account.user.id);
      if (organization !== null) return { ok: true, value: { ...caller, organization } };
      return { ok: false, reason: membership ? 'forbidden' : 'not_found' };
    },

    ...memberOperations(team),
    ...invitationOperations(team),
    ...acceptOperations(team),
    ...sessionOperations(team),
    ...policyOperations(team),

    async organizations(cookieHeader) {
      const current = await authenticateCookie(cookieHeader, context);
      if (!current) return null;
      const store = options.organizations;
      if (!store) return [];
      const administered = await store.administeredBy(current.account.user.id);
      return Promise.all(
        administered.map(async (organization) => ({ organization, projects: await store.projects(organization) })),
      );
    },

    auditLog: async (caller, query) => audit?.list({ ...query, projectKey: caller.projectKey }) ?? null,

    auditChain: (caller) => (audit ? walkChain(audit, caller.projectKey) : null),
    async verifyAudit(caller, expectHead) {
      if (!audit) return null;
      if (walks >= maxConcurrentWalks) return 'busy';
      walks += 1;
      try {
        return await verifyAuditChain(audit, caller.projectKey, expectHead ? { expectHead } : {});
      } finally {
        walks -= 1;
      }
    },
    organizationAdmins: options.organizations
      ? createOrganizationAdmins({ context, organizations: options.organizations, directory: team.directory, audit })
      : null,
  };
}

/** An audit event of `caller` (null: nobody signed in) at the service's time. */
function teamEvent(
  team: Team,
  caller: TeamCaller | null,
  fields: Omit<AuditEvent, 'actor' | 'session' | 'at'>,
): AuditEvent {
  return {
    ...fields,
    // An organisation's admin acting on one of its projects: the record says in which capacity.
    data: caller?.organization ? { ...fields.data, asAdminOf: caller.organization } : fields.data,
    actor: caller?.account.user.email ?? null,
    session: caller?.sessionId ?? null,
    at: team.context.now(),
  };
}

/** The organisation of `projectKey` when `userId` administers it, else null. */
async function organizationAdministered(team: Team, projectKey: string, userId: string): Promise<string | null> {
  const organizations = team.options.organizations;
  const organization = organizations && (await organizations.organizationOf(projectKey));
  if (!organizations || !organization) return null;
  return (await organizations.administeredBy(userId)).includes(organization) ? organization : null;
}

/** A membership change with its audit event: in the store's own transaction when it can, else right after. */
async function changeAudited(
  team: Team,
  change: MembershipChange,
  describe: (before: Membership[]) => AuditEvent,
): Promise<MembershipChangeResult> {
  const result = await team.directory.changeMembership(change, team.audit && describe);
  if (result.ok && !result.audited && team.audit) await team.audit.append(describe(result.before));
  return result;
}

/** Revokes the caller's project's pending invitations that `matches`, each recorded with `reason`. */
async function revokeInvitationsWhere(
  team: Team,
  caller: TeamCaller,
  reason: 'member-removed' | 'inviter-demoted',
  matches: (invitation: InvitationRecord) => boolean,
): Promise<void> {
  for (const pending of await team.invitations.list(caller.projectKey, team.context.now()))
    if (matches(pending)) await revokeAudited(team, caller, pending.id, { reason });
}

/** Revokes one invitation with its `invitation-revoked` record: in one transaction where the store allows. */
async function revokeAudited(
  team: Team,
  caller: TeamCaller,
  id: string,
  extra: { reason?: string },
): Promise<InvitationRecord | null> {
  const { audit, invitations } = team;
  const describe = (revoked: InvitationRecord) =>
    teamEvent(team, caller, {
      projectKey: caller.projectKey,
      type: 'invitation-revoked',
      subject: id,
      data: { email: revoked.email, role: revoked.role, ...extra },
    });
  if (audit && invitations.appendsAudit) return invitations.revoke(caller.projectKey, id, describe);
  const revoked = await invitations.revoke(caller.projectKey, id);
  if (revoked && audit) await audit.append(describe(revoked));
  return revoked;
}

/** The member of the caller's project with this user id, if any. */
async function memberOf(team: Team, caller: TeamCaller, userId: string): Promise<ProjectMember | undefined> {
  return (await team.directory.listMembers(caller.projectKey)).find((candidate) => candidate.user.id === userId);
}

/** Listing members, changing their roles, removing them. */
function memberOperations(team: Team): Pick<TeamAdmin, 'listMembers' | 'changeRole' | 'removeMember'> {
  const { directory, roles, adminRole } = team;
  const event = (caller: TeamCaller | null, fields: Omit<AuditEvent, 'actor' | 'session' | 'at'>) =>
    teamEvent(team, caller, fields);
  const change = (input: MembershipChange, describe: (before: Membership[]) => AuditEvent) =>
    changeAudited(team, input, describe);
  const member = (caller: TeamCaller, userId: string) => memberOf(team, caller, userId);
  return {
    listMembers: (caller) => directory.listMembers(caller.projectKey),

    async changeRole(caller, userId, role) {
      if (!roles.includes(role)) return { ok: false, reason: 'invalid_role' };
      const target = await member(caller, userId);
      if (!target) return { ok: false, reason: 'not_found' };
      const result = await change({ userId, projectKey: caller.projectKey, role, keepRole: adminRole }, (before) =>
        event(caller, {
          projectKey: caller.projectKey,
          type: 'member-role-changed',
          subject: userId,
          data: { email: target.user.email, from: before.map((membership) => membership.role), to: role },
        }),
      );
      if (!result.ok) return { ok: false, reason: result.reason === 'last_role_holder' ? 'last_admin' : 'not_found' };
      // An admin no longer: the invitations they sent as one are void.
      if (role !== adminRole && result.before.some((held) => held.role === adminRole))
        await revokeInvitationsWhere(team, caller, 'inviter-demoted', (pending) => pending.invitedBy === userId);
      return { ok: true, value: (await member(caller, userId)) ?? target };
    },

    async removeMember(caller, userId) {
      const target = await member(caller, userId);
      if (!target) return { ok: false, reason: 'not_found' };
      const result = await change(
        { userId, projectKey: caller.projectKey, remove: true, keepRole: adminRole },
        (before) =>
          event(caller, {
            projectKey: caller.projectKey,
            type: 'member-removed',
            subject: userId,
            data: { email: target.user.email, roles: before.map((membership) => membership.role) },
          }),
      );
      if (!result.ok) return { ok: false, reason: result.reason === 'last_role_holder' ? 'last_admin' : 'not_found' };
      // Someone removed does not come back through an invitation still pending for their address, and
      // the invitations they sent as an admin go with them.
      await revokeInvitationsWhere(
        team,
        caller,
        'member-removed',
        (pending) => pending.email === target.user.email || pending.invitedBy === userId,
      );
      return { ok: true, value: null };
    },
  };
}

/** Inviting, listing and revoking invitations. */
function invitationOperations(team: Team): Pick<TeamAdmin, 'invite' | 'listInvitations' | 'revokeInvitation'> {
  const { options, context, audit, directory, invitations, roles, ttlMs } = team;
  const maxPending = options.maxPendingInvitations ?? 500;
  const event = (caller: TeamCaller | null, fields: Omit<AuditEvent, 'actor' | 'session' | 'at'>) =>
    teamEvent(team, caller, fields);
  return {
    async invite(caller, input) {
      if (!roles.includes(input.role)) return { ok: false, reason: 'invalid_role' };
      const email = normalizeEmail(input.email);
      const members = await directory.listMembers(caller.projectKey);
      if (members.some((candidate) => candidate.user.email === email)) return { ok: false, reason: 'already_member' };
      // The client a membership names goes downstream as identity: only one the project already has.
      const clients = new Set(members.flatMap((candidate) => candidate.memberships.map((held) => held.clientId)));
      if (caller.membership) clients.add(caller.membership.clientId);
      const clientId = input.clientId ?? caller.membership?.clientId ?? [...clients][0];
      if (clientId === undefined || !clients.has(clientId)) return { ok: false, reason: 'invalid_client' };
      if ((await invitations.list(caller.projectKey, context.now())).length >= maxPending)
        return { ok: false, reason: 'too_many_invitations' };
      const token = base64url.encode(context.randomBytes(32));
      const now = context.now();
      const record: InvitationRecord = {
        id: crypto.randomUUID(),
        tokenHash: context.hashSecret(token),
        projectKey: caller.projectKey,
        clientId,
        role: input.role,
        email,
        invitedBy: caller.account.user.id,
        createdAt: now,
        expiresAt: now + ttlMs,
      };
      const created = event(caller, {
        projectKey: caller.projectKey,
        type: 'invitation-created',
        subject: record.id,
        data: {
          email,
          role: record.role,
          clientId: record.clientId,
          expiresAt: new Date(record.expiresAt).toISOString(),
        },
      });
      // In the invitation's own transaction where the store keeps the trail too, else right after.
      const together = audit !== undefined && invitations.appendsAudit === true;
      await invitations.create(record, together ? created : undefined);
      if (audit && !together) await audit.append(created);
      const invitation = summary(record);
      const link = options.invitationLink?.(token);
      if (options.email && link !== undefined) {
        await options.email.send(invitationMessage(record, caller, link, options.appName ?? 'Deskpilot'));
        return { ok: true, value: { invitation } };
      }
      return { ok: true, value: { invitation, token, ...(link === undefined ? {} : { link }) } };
    },

    listInvitations: async (caller) =>
      (await invitations.list(caller.projectKey, context.now())).map((record) => summary(record)),

    async revokeInvitation(caller, id) {
      const revoked = await revokeAudited(team, caller, id, {});
      return revoked ? { ok: true, value: null } : { ok: false, reason: 'not_found' };
    },
  };
}

/** The invitation of a well-formed token, unless expired. */
async function liveInvitation(team: Team, token: string): Promise<InvitationRecord | null> {
  if (!tokenPattern.test(token)) return null;
  const record = await team.invitations.find(team.context.hashSecret(token));
  return record && record.expiresAt > team.context.now() ? record : null;
}

/** Accepting an invitation: signed in as the invited address, or as someone new with a name and password. */
function acceptOperations(team: Team): Pick<TeamAdmin, 'acceptInvitation' | 'acceptAsNewAccount'> {
  const { options, context, audit, directory, invitations, minPasswordLength } = team;
  const event = (caller: TeamCaller | null, fields: Omit<AuditEvent, 'actor' | 'session' | 'at'>) =>
    teamEvent(team, caller, fields);
  const change = (input: MembershipChange, describe: (before: Membership[]) => AuditEvent) =>
    changeAudited(team, input, describe);
  return {
    async acceptInvitation(cookieHeader, token) {
      const current = await authenticateCookie(cookieHeader, context);
      if (!current) return { ok: false, reason: 'unauthenticated' };
      const live = await liveInvitation(team, token);
      if (!live) return { ok: false, reason: 'invalid_token' };
      if (live.email !== current.account.user.email) return { ok: false, reason: 'wrong_account' };
      // A member already: the invitation would change nothing (nor their role), and stays for nobody.
      if (current.account.memberships.some((candidate) => candidate.projectKey === live.projectKey))
        return { ok: false, reason: 'already_member' };
      if (!(await invitations.consume(live.tokenHash))) return { ok: false, reason: 'invalid_token' };
      const caller = {
        projectKey: live.projectKey,
        account: current.account,
        membership: current.membership,
        organization: null,
        sessionId: current.record.id,
      };
      const accepted = (before: Membership[]) =>
        event(caller, {
          projectKey: live.projectKey,
          type: 'invitation-accepted',
          subject: live.id,
          data: {
            userId: current.account.user.id,
            role: live.role,
            clientId: live.clientId,
            added: before.length === 0,
          },
        });
      const joined = await restoringOnFailure(invitations, live, () =>
        change(
          {
            userId: current.account.user.id,
            projectKey: live.projectKey,
            role: live.role,
            clientId: live.clientId,
            addOnly: true,
          },
          accepted,
        ),
      );
      if (!joined.ok) return { ok: false, reason: joined.reason === 'already_member' ? 'already_member' : 'not_found' };
      return { ok: true, value: summary(live) };
    },

    async acceptAsNewAccount(input) {
      // Only a link that went to the address proves whoever holds it owns the address: a token handed to
      // the inviting admin must not let the admin make (and keep the password of) the invitee's account.
      if (!options.email) return { ok: false, reason: 'sign_in_first' };
      if (input.password.length < minPasswordLength) return { ok: false, reason: 'weak_password' };
      const live = await liveInvitation(team, input.token);
      if (!live) return { ok: false, reason: 'invalid_token' };
      if (await directory.findUserByEmail(live.email)) return { ok: false, reason: 'sign_in_first' };
      const passwordHash = await team.hashPassword(input.password);
      if (passwordHash === 'busy') return { ok: false, reason: 'busy' };
      if (!(await invitations.consume(live.tokenHash))) return { ok: false, reason: 'invalid_token' };
      const membership = { projectKey: live.projectKey, clientId: live.clientId, role: live.role };
      const created = await restoringOnFailure(invitations, live, async () => {
        const account = await directory.createUser({
          email: live.email,
          name: input.name,
          passwordHash,
          // The link went to that address: following it proved the address (not so for a token handed over).
          emailVerified: options.email !== undefined,
          memberships: [membership],
        });
        // Someone took the address meanwhile (another invitation, a sign-up elsewhere): they sign in first.
        return account ? { ok: true as const, account } : { ok: false as const };
      });
      if (!created.ok) return { ok: false, reason: 'sign_in_first' };
      const { account } = created;
      await audit?.append({
        projectKey: live.projectKey,
        type: 'invitation-accepted',
        actor: account.user.email,
        session: null,
        subject: live.id,
        data: { userId: account.user.id, role: live.role, clientId: live.clientId, added: true, newAccount: true },
        at: context.now(),
      });
      return { ok: true, value: account };
    },
  };
}

/** A member's sessions in the caller's project: listed, and revoked one or all. */
function sessionOperations(team: Team): Pick<TeamAdmin, 'memberSessions' | 'revokeMemberSessions'> {
  const { context, audit } = team;
  const sessionsOf = async (caller: TeamCaller, userId: string) => {
    const now = context.now();
    return (await context.store.listByUser(userId)).filter(
      (record) => record.projectKey === caller.projectKey && isLive(record, now),
    );
  };
  return {
    async memberSessions(caller, userId) {
      if (!(await memberOf(team, caller, userId))) return { ok: false, reason: 'not_found' };
      const sessions = await sessionsOf(caller, userId);
      return { ok: true, value: sessions.map((record) => toSessionSummary(record, context, caller.sessionId)) };
    },
    async revokeMemberSessions(caller, userId, id) {
      const target = await memberOf(team, caller, userId);
      if (!target) return { ok: false, reason: 'not_found' };
      const sessions = (await sessionsOf(caller, userId)).filter((record) => id === undefined || record.id === id);
      if (id !== undefined && sessions.length === 0) return { ok: false, reason: 'not_found' };
      let revoked = 0;
      for (const record of sessions) if (await context.store.delete(record.id)) revoked++;
      await audit?.append(
        teamEvent(team, caller, {
          projectKey: caller.projectKey,
          type: 'session-revoked',
          subject: id ?? userId,
          data: { userId, email: target.user.email, by: 'admin', revoked },
        }),
      );
      return { ok: true, value: revoked };
    },
  };
}

/** A project's role policy: read by its admins and by whoever builds a chat context, changed by its admins. */
function policyOperations(team: Team): Pick<TeamAdmin, 'policy' | 'setPolicy' | 'capabilitiesFor'> {
  const { options, audit } = team;
  const effectiveFlags = (policy: RolePolicy) =>
    Object.fromEntries(team.roles.map((role) => [role, capabilitiesOf(policy, role, team.capabilities)]));
  const current = async (projectKey: string): Promise<StoredRolePolicy> =>
    (await options.policies?.get(projectKey)) ?? {
      ...structuredClone(defaultRolePolicy),
      projectKey,
      version: 0,
      updatedAt: 0,
      updatedBy: null,
    };
  return {
    policy: (caller) => current(caller.projectKey),
    async setPolicy(caller, policy, expectedVersion) {
      const store = options.policies;
      if (!store) return { ok: false, reason: 'not_found' };
      const describe = (before: StoredRolePolicy | null) =>
        teamEvent(team, caller, {
          projectKey: caller.projectKey,
          type: 'policy-changed',
          subject: caller.projectKey,
          // Each role's every flag before and after, as members had them: what an auditor compares.
          data: {
            from: effectiveFlags(before ?? defaultRolePolicy),
            to: effectiveFlags(policy),
            version: expectedVersion + 1,
          },
        });
      const change = { expectedVersion, updatedAt: team.context.now(), updatedBy: caller.account.user.email };
      let stored: StoredRolePolicy | null;
      if (audit && store.appendsAudit) stored = await store.set(caller.projectKey, policy, change, describe);
      else {
        const before = audit ? await store.get(caller.projectKey) : null;
        stored = await store.set(caller.projectKey, policy, change);
        if (stored && audit) await audit.append(describe(before));
      }
      return stored ? { ok: true, value: stored } : { ok: false, reason: 'conflict' };
    },
    capabilitiesFor: async (projectKey, role) => capabilitiesOf(await current(projectKey), role, team.capabilities),
  };
}

/**
 * Runs what an invitation, already used up, was for; when that fails or refuses, the invitation is put
 * back (still live, same token), so the invitee can try again rather than ask for a new one.
 */
async function restoringOnFailure<Result extends { ok: boolean }>(
  invitations: InvitationStore,
  invitation: InvitationRecord,
  action: () => Promise<Result>,
): Promise<Result> {
  let result: Result;
  try {
    result = await action();
  } catch (error) {
    await invitations.create(invitation).catch(() => {});
    throw error;
  }
  if (!result.ok) await invitations.create(invitation).catch(() => {});
  return result;
}

/** An invitation without its digest. */
function summary({ tokenHash: _digest, ...invitation }: InvitationRecord): InvitationSummary {
  return invitation;
}

/**
 * A project's whole trail, oldest first, read a page at a time from just after retention's cut to the
 * head read first: a row stored past the head is no record of the chain, and never exported as one.
 */
async function* walkChain(audit: AuditStore, projectKey: string): AsyncIterable<AuditRecord> {
  const head = await audit.head(projectKey);
  if (!head) return;
  let after = head.prunedThrough;
  while (after < head.seq) {
    const page = await audit.chain(projectKey, after, 500);
    const covered = page.filter((record) => record.seq <= head.seq);
    yield* covered;
    if (page.length < 500 || covered.length < page.length) return;
    after = page.at(-1)!.seq;
  }
}

/** The email inviting someone to a project. */
function invitationMessage(record: InvitationRecord, caller: TeamCaller, link: string, appName: string): EmailMessage {
  const days = Math.max(1, Math.round((record.expiresAt - record.createdAt) / (24 * 60 * 60 * 1000)));
  return {
    to: record.email,
    subject: `You are invited to ${record.projectKey} on ${appName}`,
    text: [
      `${caller.account.user.name} invited you to the project ${record.projectKey} on ${appName}, as ${record.role}.`,
      '',
      `Accept within ${days} day${days === 1 ? '' : 's'}: ${link}`,
      '',
      'Sign in with the address this message was sent to (or create your account on that page), and you join.',
      'If you did not expect this, ignore it: nothing happens unless the link is opened.',
    ].join('\n'),
  };
}
