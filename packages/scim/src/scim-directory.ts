import type { SessionKernel } from '@deskpilot/core/module';
import { hashPassword, normalizeEmail, type AuditEvent, type Membership } from '@deskpilot/core/session';
import type { InvitationStore, OrganizationAdmins, TeamDirectory } from '@deskpilot/core/team';
import { applyPatch, groupPatch, type PatchOperation } from './scim-patching.js';
import {
  groupInput,
  readResource,
  ScimProblem,
  userAttributesOf,
  userInput,
  type UserInput,
} from './scim-resources.js';
import type { ScimGroupRecord, ScimStore, ScimUserRecord } from './scim-store.js';

/**
 * One rule of an organisation's mapping from directory groups to project roles: members of `group`
 * (its `displayName` or `externalId`) hold `role` in `projectKey` (for `clientId` when they have no
 * membership there yet). For a project some rule names, the first rule whose group a user is in gives
 * their role, and no rule means no membership: removal from the group takes the role away.
 */
export interface GroupRole {
  group: string;
  projectKey: string;
  clientId: string;
  role: string;
}

/** What the directory needs of its host: the stores, the organisation's domains and its group mapping. */
export interface ScimDirectoryOptions {
  store: ScimStore;
  /** Accounts and memberships (the directory the team module is given). */
  directory: TeamDirectory;
  /** The email domains the organisation owns: a directory may bind only accounts with an address there. */
  domains: (organization: string) => readonly string[] | Promise<readonly string[]>;
  /** The organisation's group → role mapping. @default no mapping: memberships are left to the admins */
  groupRoles?: ((organization: string) => readonly GroupRole[] | Promise<readonly GroupRole[]>) | undefined;
  /**
   * The team module's invitations: a deprovisioned user's pending invitations to the organisation's
   * projects are revoked, or accepting one would give back a membership. Give it whenever the team
   * module has invitations.
   */
  invitations?: Pick<InvitationStore, 'list' | 'revoke' | 'appendsAudit'> | undefined;
}

/** Who made a change, for the trail: the token the directory called with. */
export interface ScimCaller {
  organization: string;
  tokenId: string;
}

/** What the team module offers other modules: the organisations' projects. */
interface OrganizationsPort {
  readonly organizationAdmins: OrganizationAdmins | null;
}

const emailShape = /^[^\s@]+@([a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+)$/;

/** The address a directory user's account has: the primary email, else the first, else `userName`. */
function emailOf(input: UserInput): string {
  const emails = input.emails ?? [];
  const chosen = emails.find((email) => email.primary) ?? emails[0];
  return normalizeEmail(chosen?.value ?? input.userName);
}

function nameOf(input: UserInput, email: string): string {
  const given = [input.name?.givenName, input.name?.familyName].filter(Boolean).join(' ');
  return (input.displayName || input.name?.formatted || given || email).slice(0, 200);
}

/** A hash of a password nobody knows, made once per process: a provisioned account signs in through its provider. */
let unknowable: Promise<string> | undefined;
const unknowablePasswordHash = () =>
  (unknowable ??= hashPassword(globalThis.crypto.getRandomValues(new Uint8Array(32)).join('.')));

const conflict = (detail: string) => new ScimProblem(409, detail, 'uniqueness');
const notFound = (what: 'User' | 'Group', id: string) => new ScimProblem(404, `${what} ${id} not found.`);

/** A user as PATCH sees it: its keys and attributes in one document. */
const patchable = (user: ScimUserRecord) => ({
  userName: user.userName,
  ...(user.externalId === null ? {} : { externalId: user.externalId }),
  active: user.active,
  ...user.attributes,
});

/** One change of a user's memberships at a time in this process (the key: organisation and account). */
function serializer() {
  const running = new Map<string, Promise<unknown>>();
  return function serialized<T>(by: ScimCaller, user: ScimUserRecord, work: () => Promise<T>): Promise<T> {
    const key = `${by.organization}\u0000${user.userId}`;
    const next = (running.get(key) ?? Promise.resolve()).catch(() => {}).then(work);
    running.set(key, next);
    const clear = () => running.get(key) === next && running.delete(key);
    next.then(clear, clear);
    return next;
  };
}

/** Refuses (400) an address outside the organisation's domains. */
async function checkEmail(options: ScimDirectoryOptions, organization: string, email: string) {
  const domain = emailShape.exec(email)?.[1];
  const owned = new Set(await options.domains(organization));
  if (!domain || !owned.has(domain))
    throw new ScimProblem(
      400,
      "The user's email (the primary of emails, else userName) must be an address in one of the organisation's domains.",
      'invalidValue',
    );
}

/** Writes a user's memberships in the organisation's projects, each change in the project's trail. */
function roleWriter(options: ScimDirectoryOptions, kernel: SessionKernel) {
  const { store, directory } = options;
  const { context } = kernel;
  const now = () => context.now();

  const projectsOf = async (organization: string): Promise<string[]> => {
    const admins = kernel.module<OrganizationsPort>('team')?.organizationAdmins;
    return admins ? [...(await admins.projects(organization))] : [];
  };

  /** Applies one membership change with its trail record (in the change's transaction where the store can). */
  async function changeMembership(
    by: ScimCaller,
    user: ScimUserRecord,
    projectKey: string,
    target: { role: string; clientId: string } | null,
    reason: string,
  ) {
    const event = (before: Membership[]): AuditEvent => ({
      projectKey,
      type: target ? 'scim-role-set' : 'scim-membership-removed',
      actor: null,
      session: null,
      subject: user.userId,
      data: {
        organization: by.organization,
        token: by.tokenId,
        scimUser: user.id,
        reason,
        before: before.map((membership) => membership.role),
        after: target?.role ?? null,
      },
      at: now(),
    });
    const result = await directory.changeMembership(
      target
        ? { userId: user.userId, projectKey, role: target.role, clientId: target.clientId }
        : { userId: user.userId, projectKey, remove: true },
      event,
    );
    if (result.ok && !result.audited) await kernel.audit?.append(event(result.before));
    return result.ok ? 1 : 0;
  }

  /**
   * Puts a user's memberships in the organisation's projects where `active` says: none when inactive;
   * for each project the mapping names, the role of the first rule whose group they are in, or none.
   */
  async function apply(by: ScimCaller, user: ScimUserRecord, active: boolean, reason: string) {
    const projects = await projectsOf(by.organization);
    const account = await context.directory.getAccount(user.userId);
    if (!account) return 0;
    const held = (projectKey: string) =>
      account.memberships.filter((membership) => membership.projectKey === projectKey);
    let changed = 0;
    if (!active) {
      for (const projectKey of projects)
        if (held(projectKey).length > 0) changed += await changeMembership(by, user, projectKey, null, reason);
      return changed;
    }
    const rules = ((await options.groupRoles?.(by.organization)) ?? []).filter((rule) =>
      projects.includes(rule.projectKey),
    );
    if (rules.length === 0) return 0;
    const groups = await store.groupsOf(by.organization, user.id);
    const inGroup = (rule: GroupRole) =>
      groups.some((group) => group.displayName === rule.group || group.externalId === rule.group);
    for (const projectKey of new Set(rules.map((rule) => rule.projectKey))) {
      const rule = rules.find((candidate) => candidate.projectKey === projectKey && inGroup(candidate));
      const memberships = held(projectKey);
      if (rule && !(memberships.length > 0 && memberships.every((membership) => membership.role === rule.role)))
        changed += await changeMembership(by, user, projectKey, rule, reason);
      else if (!rule && memberships.length > 0) changed += await changeMembership(by, user, projectKey, null, reason);
    }
    return changed;
  }

  return { projectsOf, apply };
}

/** Keeps users' memberships in the organisation's projects in step with their directory. */
function membershipSync(options: ScimDirectoryOptions, kernel: SessionKernel) {
  const { store } = options;
  const { context } = kernel;
  const now = () => context.now();
  const { projectsOf, apply } = roleWriter(options, kernel);

  const serialized = serializer();

  /**
   * Brings a user's memberships in step with what the store holds of them now. Written for an active
   * user, then read again: a deactivation that landed meanwhile (another request, another replica)
   * is applied too, so no role outlives it.
   */
  function sync(by: ScimCaller, user: ScimUserRecord, reason: string) {
    return serialized(by, user, async () => {
      const current = await store.getUser(by.organization, user.id);
      const changed = await apply(by, current ?? user, current?.active ?? false, reason);
      if (current?.active && changed > 0 && !(await store.getUser(by.organization, user.id))?.active)
        await apply(by, current, false, 'deactivated');
    });
  }

  /** Revokes the user's pending invitations to the organisation's projects, each in its trail: how many. */
  async function revokeInvitations(by: ScimCaller, user: ScimUserRecord, projects: ReadonlySet<string>) {
    const { invitations } = options;
    const account = invitations && (await context.directory.getAccount(user.userId));
    if (!invitations || !account) return 0;
    let revoked = 0;
    for (const projectKey of projects)
      for (const invitation of await invitations.list(projectKey, now()))
        if (invitation.email === account.user.email) {
          const event = (record: { id: string; role: string }): AuditEvent => ({
            projectKey,
            type: 'invitation-revoked',
            actor: null,
            session: null,
            subject: record.id,
            data: { organization: by.organization, reason: 'scim-deprovisioned', role: record.role },
            at: now(),
          });
          const gone = await invitations.revoke(projectKey, invitation.id, event);
          if (gone && !invitations.appendsAudit) await kernel.audit?.append(event(gone));
          if (gone) revoked += 1;
        }
    return revoked;
  }

  /**
   * Ends what an inactive or deleted user held in the organisation: their memberships in its projects
   * first (no session can switch into one after), then every session open in one of them, then their
   * place among its admins. Idempotent: a directory that retries after a failure finishes it. Recorded
   * in each project when it changed anything, or when the user was active before.
   */
  async function deprovision(
    by: ScimCaller,
    user: ScimUserRecord,
    reason: 'deactivated' | 'deleted',
    wasActive: boolean,
  ) {
    const removed = await serialized(by, user, () => apply(by, user, false, reason));
    const projects = new Set(await projectsOf(by.organization));
    let ended = 0;
    for (const session of await context.store.listByUser(user.userId))
      if (projects.has(session.projectKey) && (await context.store.delete(session.id))) ended += 1;
    const invitationsRevoked = await revokeInvitations(by, user, projects);
    const admins = kernel.module<OrganizationsPort>('team')?.organizationAdmins;
    const revoked = (await admins?.revoke(by.organization, user.userId, `scim-user-${reason}`)) ?? false;
    if (!wasActive && removed === 0 && ended === 0 && invitationsRevoked === 0 && !revoked && reason === 'deactivated')
      return;
    for (const projectKey of projects)
      await kernel.audit?.append({
        projectKey,
        type: `scim-user-${reason}`,
        actor: null,
        session: null,
        subject: user.userId,
        data: {
          organization: by.organization,
          token: by.tokenId,
          scimUser: user.id,
          membershipsRemoved: removed,
          sessionsEnded: ended,
          invitationsRevoked,
          adminRevoked: revoked,
        },
        at: now(),
      });
  }

  /** Syncs every user whose groups changed (their ids). */
  async function syncMembers(by: ScimCaller, ids: Iterable<string>, reason: string) {
    for (const id of new Set(ids)) {
      const user = await store.getUser(by.organization, id);
      if (user) await sync(by, user, reason);
    }
  }

  return { projectsOf, sync, deprovision, syncMembers };
}

type MembershipSync = ReturnType<typeof membershipSync>;

/** The users of a directory: created bound to an account, replaced, patched, deleted. */
function userOperations(options: ScimDirectoryOptions, kernel: SessionKernel, { sync, deprovision }: MembershipSync) {
  const { store, directory } = options;
  const now = () => kernel.context.now();

  /** The account with this address, created (no password anyone knows, no membership) when there is none. */
  async function bindAccount(email: string, input: UserInput) {
    const found = await directory.findUserByEmail(email);
    if (found) return found.id;
    const created = await directory.createUser({
      email,
      name: nameOf(input, email),
      passwordHash: await unknowablePasswordHash(),
      emailVerified: true,
      memberships: [],
    });
    if (created) return created.user.id;
    // Created meanwhile by another request: that account.
    const raced = await directory.findUserByEmail(email);
    if (!raced) throw new ScimProblem(409, 'The account changed meanwhile: try again.');
    return raced.id;
  }

  /** A user replaced from what was read (retried when another request changed it meanwhile). */
  async function replaceUser(
    by: ScimCaller,
    id: string,
    next: (before: ScimUserRecord) => UserInput,
  ): Promise<ScimUserRecord> {
    for (let attempt = 0; ; attempt += 1) {
      const before = await store.getUser(by.organization, id);
      if (!before) throw notFound('User', id);
      const input = next(before);
      const after: ScimUserRecord = {
        ...before,
        userName: input.userName,
        externalId: input.externalId ?? null,
        active: input.active ?? before.active,
        attributes: userAttributesOf(input),
        updatedAt: now(),
        version: before.version + 1,
      };
      const outcome = await store.replaceUser(after);
      if (outcome === 'not_found') throw notFound('User', id);
      if (outcome === 'user_name_taken') throw conflict('Another user has this userName.');
      if (outcome === 'external_id_taken') throw conflict('Another user has this externalId.');
      if (outcome === 'replaced') {
        // Every time it is written inactive, not only when it becomes so: a retry finishes what failed.
        if (!after.active) await deprovision(by, after, 'deactivated', before.active);
        else if (!before.active) await sync(by, after, 'reactivated');
        return after;
      }
      if (attempt >= 4) throw new ScimProblem(409, 'The user keeps changing: try again.');
    }
  }

  return {
    async createUser(by: ScimCaller, body: unknown): Promise<ScimUserRecord> {
      const input = readResource(userInput, body);
      const email = emailOf(input);
      await checkEmail(options, by.organization, email);
      const userId = await bindAccount(email, input);
      const at = now();
      const user: ScimUserRecord = {
        id: globalThis.crypto.randomUUID(),
        organization: by.organization,
        userId,
        userName: input.userName,
        externalId: input.externalId ?? null,
        active: input.active ?? true,
        attributes: userAttributesOf(input),
        createdAt: at,
        updatedAt: at,
        version: 1,
      };
      const outcome = await store.createUser(user);
      if (outcome === 'user_name_taken') throw conflict('A user with this userName exists.');
      if (outcome === 'external_id_taken') throw conflict('A user with this externalId exists.');
      if (outcome === 'account_taken') throw conflict("This email's account is already a user of this directory.");
      if (!user.active) await deprovision(by, user, 'deactivated', false);
      return user;
    },

    /** PUT: the whole user as given (its account stays the one it was bound to). */
    replaceUser: (by: ScimCaller, id: string, body: unknown) =>
      replaceUser(by, id, () => readResource(userInput, body)),

    patchUser: (by: ScimCaller, id: string, operations: readonly PatchOperation[]) =>
      replaceUser(by, id, (before) => readResource(userInput, applyPatch('user', patchable(before), operations))),

    /**
     * DELETE: written inactive first, deprovisioned, then deleted: a failure on the way leaves the user
     * inactive and in the store, and the directory's retry finishes it.
     */
    async deleteUser(by: ScimCaller, id: string) {
      const user = await store.getUser(by.organization, id);
      if (!user) throw notFound('User', id);
      const inactive = { ...user, active: false, updatedAt: now(), version: user.version + 1 };
      if (user.active) {
        const outcome = await store.replaceUser(inactive);
        if (outcome === 'not_found') throw notFound('User', id);
        if (outcome !== 'replaced') throw new ScimProblem(409, 'The user changed meanwhile: try again.');
      }
      await deprovision(by, inactive, 'deleted', user.active);
      await store.deleteUser(by.organization, id);
    },
  };
}

/** The groups of a directory: their members' roles follow every change. */
function groupOperations(options: ScimDirectoryOptions, kernel: SessionKernel, { syncMembers }: MembershipSync) {
  const { store } = options;
  const now = () => kernel.context.now();

  /** Applies a change of a group's members, then brings every member it touched in step. */
  async function changeMembers(
    by: ScimCaller,
    id: string,
    change: { add: readonly string[]; remove: readonly string[]; replace?: boolean },
  ) {
    const outcome = await store.changeMembers(by.organization, id, change);
    if (outcome === 'not_found') throw notFound('Group', id);
    if (outcome === 'unknown_member')
      throw new ScimProblem(400, 'A member is not a user of this directory.', 'invalidValue');
    // Only those whose membership changed: an id added again, or removed while not a member, costs nothing.
    await syncMembers(by, outcome.changed, 'groups');
  }

  /** Renames a group (or changes its externalId) from what was read; its members' roles follow. */
  async function replaceGroup(by: ScimCaller, before: ScimGroupRecord, displayName: string, externalId: string | null) {
    if (before.displayName === displayName && before.externalId === externalId) return before;
    const after = { ...before, displayName, externalId, updatedAt: now(), version: before.version + 1 };
    const outcome = await store.replaceGroup(after);
    if (outcome === 'not_found') throw notFound('Group', before.id);
    if (outcome === 'external_id_taken') throw conflict('Another group has this externalId.');
    if (outcome === 'conflict') throw new ScimProblem(409, 'The group changed meanwhile: try again.');
    // Its members' roles change only when the mapping names it, by its old name or its new one.
    const names = [before.displayName, before.externalId, displayName, externalId];
    const rules = (await options.groupRoles?.(by.organization)) ?? [];
    if (rules.some((rule) => names.includes(rule.group))) {
      const members = await store.members(by.organization, before.id);
      await syncMembers(
        by,
        members.map((member) => member.value),
        'groups',
      );
    }
    return after;
  }

  return {
    async createGroup(by: ScimCaller, body: unknown): Promise<ScimGroupRecord> {
      const input = readResource(groupInput, body);
      const at = now();
      const group: ScimGroupRecord = {
        id: globalThis.crypto.randomUUID(),
        organization: by.organization,
        displayName: input.displayName,
        externalId: input.externalId ?? null,
        createdAt: at,
        updatedAt: at,
        version: 1,
      };
      const members = (input.members ?? []).map((member) => member.value);
      const outcome = await store.createGroup(group, members);
      if (outcome === 'external_id_taken') throw conflict('A group with this externalId exists.');
      if (outcome === 'unknown_member')
        throw new ScimProblem(400, 'A member is not a user of this directory.', 'invalidValue');
      await syncMembers(by, members, 'groups');
      return group;
    },

    /** PUT: the group's name and exactly the members given. */
    async replaceGroup(by: ScimCaller, id: string, body: unknown): Promise<ScimGroupRecord> {
      const input = readResource(groupInput, body);
      const before = await store.getGroup(by.organization, id);
      if (!before) throw notFound('Group', id);
      await changeMembers(by, id, {
        add: (input.members ?? []).map((member) => member.value),
        remove: [],
        replace: true,
      });
      return replaceGroup(by, before, input.displayName, input.externalId ?? null);
    },

    async patchGroup(by: ScimCaller, id: string, operations: readonly PatchOperation[]): Promise<ScimGroupRecord> {
      const before = await store.getGroup(by.organization, id);
      if (!before) throw notFound('Group', id);
      const { attributes, members } = groupPatch(operations);
      const patched = readResource(
        groupInput,
        applyPatch(
          'group',
          { displayName: before.displayName, ...(before.externalId === null ? {} : { externalId: before.externalId }) },
          attributes,
        ),
      );
      if (members)
        await changeMembers(by, id, { add: [...members.add], remove: [...members.remove], replace: members.replace });
      return replaceGroup(by, before, patched.displayName, patched.externalId ?? null);
    },

    async deleteGroup(by: ScimCaller, id: string) {
      const members = await store.members(by.organization, id);
      if (!(await store.deleteGroup(by.organization, id))) throw notFound('Group', id);
      await syncMembers(
        by,
        members.map((member) => member.value),
        'groups',
      );
    },
  };
}

/**
 * The organisations' directories over the session service: users bound to accounts, groups mapped to
 * roles, and deprovisioning that ends what a user held in the organisation's projects at once.
 */
export function createScimDirectory(options: ScimDirectoryOptions, kernel: SessionKernel) {
  const sync = membershipSync(options, kernel);
  return {
    projectsOf: sync.projectsOf,
    ...userOperations(options, kernel, sync),
    ...groupOperations(options, kernel, sync),
  };
}

export type ScimDirectory = ReturnType<typeof createScimDirectory>;
