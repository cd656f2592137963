import { canBeStored } from '@deskpilot/core/storage';

/** A bearer token an organisation's directory calls `/scim/v2` with: only its SHA-256 is kept. */
export interface ScimTokenRecord {
  /** `scimtok_…`: how admins name it (list, revoke). */
  id: string;
  organization: string;
  /** SHA-256 of the token, base64url: the token itself is shown once, when it is created. */
  hash: string;
  /** The admin's label ("Okta", "Entra ID"). */
  name: string;
  createdAt: number;
  /** When a request last came with it (the directory's last sync), or null. */
  lastUsedAt: number | null;
}

/**
 * What a directory says of a user beyond the keys the store indexes — `name`, `displayName`, `emails`,
 * `title`, the enterprise extension… — as JSON, at most a few KiB (the handler bounds it).
 */
export type ScimAttributes = { [key: string]: unknown };

/** A user an organisation's directory provisioned, bound to one Deskpilot account. */
export interface ScimUserRecord {
  /** The SCIM `id` (a UUID), given by this service. */
  id: string;
  organization: string;
  /** The Deskpilot user it is bound to, at creation, for good: one directory user per account in an organisation. */
  userId: string;
  /** Unique in the organisation, compared without case (RFC 7643 §4.1). */
  userName: string;
  /** The directory's own id for the user; unique in the organisation when given. */
  externalId: string | null;
  /** False once the directory deactivated them: they hold no membership in the organisation's projects. */
  active: boolean;
  attributes: ScimAttributes;
  createdAt: number;
  updatedAt: number;
  /** 1 when created, one more at each replacement: a replacement names the version it replaces. */
  version: number;
}

/** A group an organisation's directory pushed: its members are rows of their own (a group may hold thousands). */
export interface ScimGroupRecord {
  id: string;
  organization: string;
  displayName: string;
  externalId: string | null;
  createdAt: number;
  updatedAt: number;
  version: number;
}

/** A member of a group: the SCIM user's id, and its `userName` (SCIM's `display`). */
export interface ScimMember {
  value: string;
  display: string;
}

/** Which resources of an organisation a list answers: all, or those whose attribute equals a value. */
export interface ScimListQuery {
  /** `userName` compares without case; the others exactly. */
  filter?: { attribute: 'userName' | 'externalId' | 'displayName'; value: string } | undefined;
  /** 1-based, as SCIM counts. */
  startIndex: number;
  /** At most this many resources (0: only the total). */
  count: number;
}

/** A page of a list: the total that matched, and the page. */
export interface ScimPage<T> {
  total: number;
  resources: T[];
}

export type ScimUserCreateResult = 'created' | 'user_name_taken' | 'external_id_taken' | 'account_taken';
export type ScimReplaceResult = 'replaced' | 'not_found' | 'conflict' | 'user_name_taken' | 'external_id_taken';
export type ScimGroupCreateResult = 'created' | 'external_id_taken' | 'unknown_member';
/** A change of members: the users whose membership it changed (added or removed), or why nothing changed. */
export type ScimMembersResult = { changed: string[] } | 'not_found' | 'unknown_member';

/**
 * Storage port of the SCIM module: the organisations' tokens, users, groups and group members. Data in,
 * data out: the handler decides; the store keeps each uniqueness (a `userName`, an `externalId`, an
 * account per organisation) and each version check atomic. Input no row can hold (a NUL, a lone
 * surrogate) finds nothing, never an error. Run `testScimStore` from `@deskpilot/scim/testing`.
 */
export interface ScimStore {
  /** Adds a token while its organisation has fewer than `max` (of concurrent additions at the edge, one wins). */
  addToken(token: ScimTokenRecord, max: number): Promise<'added' | 'limit'>;
  /** The token with this hash, or null. */
  tokenByHash(hash: string): Promise<ScimTokenRecord | null>;
  /** An organisation's tokens, oldest first. */
  listTokens(organization: string): Promise<ScimTokenRecord[]>;
  /** Deletes one of an organisation's tokens; false when it had none by that id. */
  deleteToken(organization: string, id: string): Promise<boolean>;
  /** Notes a request made with the token (its `lastUsedAt`, never moved back). */
  tokenUsed(id: string, at: number): Promise<void>;

  createUser(user: ScimUserRecord): Promise<ScimUserCreateResult>;
  getUser(organization: string, id: string): Promise<ScimUserRecord | null>;
  /** The organisation's directory user bound to a Deskpilot account, or null. */
  userByAccount(organization: string, userId: string): Promise<ScimUserRecord | null>;
  /** A page of the organisation's users, in the order they were created. */
  listUsers(organization: string, query: ScimListQuery): Promise<ScimPage<ScimUserRecord>>;
  /** Replaces a user at `user.version - 1`; its organisation, account and creation never change. */
  replaceUser(user: ScimUserRecord): Promise<ScimReplaceResult>;
  /** Deletes a user and its group memberships; false when there was none. */
  deleteUser(organization: string, id: string): Promise<boolean>;

  /** Creates a group with its members (every one a user of the organisation, or nothing is created). */
  createGroup(group: ScimGroupRecord, members: readonly string[]): Promise<ScimGroupCreateResult>;
  getGroup(organization: string, id: string): Promise<ScimGroupRecord | null>;
  listGroups(organization: string, query: ScimListQuery): Promise<ScimPage<ScimGroupRecord>>;
  /** Replaces a group's name and external id at `group.version - 1` (its members: {@link changeMembers}). */
  replaceGroup(group: ScimGroupRecord): Promise<Exclude<ScimReplaceResult, 'user_name_taken'>>;
  /**
   * Adds and removes members (`replace`: the members become exactly `add`), in one transaction; every
   * one added must be a user of the organisation, or nothing changes (`unknown_member`). Answers the
   * users whose membership changed: an id added twice, or removed while not a member, is none of them.
   */
  changeMembers(
    organization: string,
    id: string,
    change: { add: readonly string[]; remove: readonly string[]; replace?: boolean },
  ): Promise<ScimMembersResult>;
  /** A group's members, in the order of their user ids. */
  members(organization: string, id: string): Promise<ScimMember[]>;
  /** The groups a user is a member of (its display names, for the role mapping). */
  groupsOf(
    organization: string,
    userId: string,
  ): Promise<Array<{ id: string; displayName: string; externalId: string | null }>>;
  deleteGroup(organization: string, id: string): Promise<boolean>;
  /** How many users and groups the organisation's directory holds. */
  counts(organization: string): Promise<{ users: number; groups: number }>;
}

/** `userName` as it is compared: without case. */
export const userNameKey = (userName: string) => userName.toLowerCase();

/** A page of `matches` as SCIM counts (`startIndex` 1-based). */
function page<T>(matches: T[], query: ScimListQuery): ScimPage<T> {
  return { total: matches.length, resources: matches.slice(query.startIndex - 1, query.startIndex - 1 + query.count) };
}

function matches(
  record: { userName?: string; externalId: string | null; displayName?: string },
  filter: ScimListQuery['filter'],
): boolean {
  if (!filter) return true;
  if (filter.attribute === 'userName')
    return record.userName !== undefined && userNameKey(record.userName) === userNameKey(filter.value);
  if (filter.attribute === 'externalId') return record.externalId === filter.value;
  return record.displayName === filter.value;
}

/** The state of a memory store, shared by its parts. */
function memoryState() {
  const tokens = new Map<string, ScimTokenRecord>();
  const users = new Map<string, ScimUserRecord>();
  const groups = new Map<string, ScimGroupRecord>();
  /** Group id → member user ids. */
  const memberships = new Map<string, Set<string>>();
  const copy = <T extends object>(record: T): T => structuredClone(record);
  const userOf = (organization: string, id: string) => {
    const user = users.get(id);
    return user?.organization === organization ? user : undefined;
  };
  const groupOf = (organization: string, id: string) => {
    const group = groups.get(id);
    return group?.organization === organization ? group : undefined;
  };
  const taken = (user: ScimUserRecord) => {
    for (const other of users.values()) {
      if (other.id === user.id || other.organization !== user.organization) continue;
      if (userNameKey(other.userName) === userNameKey(user.userName)) return 'user_name_taken';
      if (user.externalId !== null && other.externalId === user.externalId) return 'external_id_taken';
      if (other.userId === user.userId) return 'account_taken';
    }
    return undefined;
  };
  const groupExternalTaken = (group: ScimGroupRecord) =>
    group.externalId !== null &&
    [...groups.values()].some(
      (other) =>
        other.id !== group.id && other.organization === group.organization && other.externalId === group.externalId,
    );
  return { tokens, users, groups, memberships, copy, userOf, groupOf, taken, groupExternalTaken };
}

type MemoryState = ReturnType<typeof memoryState>;

function memoryTokens({
  tokens,
  copy,
}: MemoryState): Pick<ScimStore, 'addToken' | 'tokenByHash' | 'listTokens' | 'deleteToken' | 'tokenUsed'> {
  return {
    async addToken(token, max) {
      if (tokens.has(token.id)) throw new Error(`token ${token.id} exists`);
      if ([...tokens.values()].filter((other) => other.organization === token.organization).length >= max)
        return 'limit';
      tokens.set(token.id, copy(token));
      return 'added';
    },
    async tokenByHash(hash) {
      for (const token of tokens.values()) if (token.hash === hash) return copy(token);
      return null;
    },
    listTokens: async (organization) =>
      [...tokens.values()].filter((token) => token.organization === organization).map(copy),
    async deleteToken(organization, id) {
      if (tokens.get(id)?.organization !== organization) return false;
      return tokens.delete(id);
    },
    async tokenUsed(id, at) {
      const token = tokens.get(id);
      if (token) token.lastUsedAt = Math.max(token.lastUsedAt ?? at, at);
    },
  };
}

function memoryUsers({
  users,
  memberships,
  copy,
  userOf,
  taken,
}: MemoryState): Pick<
  ScimStore,
  'createUser' | 'getUser' | 'userByAccount' | 'listUsers' | 'replaceUser' | 'deleteUser'
> {
  return {
    async createUser(user) {
      if (users.has(user.id)) throw new Error(`user ${user.id} exists`);
      const reason = taken(user);
      if (reason) return reason;
      users.set(user.id, copy({ ...user, version: 1 }));
      return 'created';
    },
    getUser: async (organization, id) => {
      const user = userOf(organization, id);
      return user ? copy(user) : null;
    },
    async userByAccount(organization, userId) {
      for (const user of users.values())
        if (user.organization === organization && user.userId === userId) return copy(user);
      return null;
    },
    listUsers: async (organization, query) =>
      page(
        [...users.values()]
          .filter((user) => user.organization === organization && matches(user, query.filter))
          .map(copy),
        query,
      ),
    async replaceUser(user) {
      const before = userOf(user.organization, user.id);
      if (!before) return 'not_found';
      if (before.version !== user.version - 1) return 'conflict';
      const reason = taken({ ...user, userId: before.userId });
      if (reason === 'user_name_taken' || reason === 'external_id_taken') return reason;
      users.set(user.id, copy({ ...user, userId: before.userId, createdAt: before.createdAt }));
      return 'replaced';
    },
    async deleteUser(organization, id) {
      if (!userOf(organization, id)) return false;
      users.delete(id);
      for (const members of memberships.values()) members.delete(id);
      return true;
    },
  };
}

function memoryGroups({
  users,
  groups,
  memberships,
  copy,
  userOf,
  groupOf,
  groupExternalTaken,
}: MemoryState): Omit<ScimStore, keyof ReturnType<typeof memoryTokens> | keyof ReturnType<typeof memoryUsers>> {
  return {
    async createGroup(group, members) {
      if (groups.has(group.id)) throw new Error(`group ${group.id} exists`);
      if (groupExternalTaken(group)) return 'external_id_taken';
      if (members.some((member) => !userOf(group.organization, member))) return 'unknown_member';
      groups.set(group.id, copy({ ...group, version: 1 }));
      memberships.set(group.id, new Set(members));
      return 'created';
    },
    getGroup: async (organization, id) => {
      const group = groupOf(organization, id);
      return group ? copy(group) : null;
    },
    listGroups: async (organization, query) =>
      page(
        [...groups.values()]
          .filter((group) => group.organization === organization && matches(group, query.filter))
          .map(copy),
        query,
      ),
    async replaceGroup(group) {
      const before = groupOf(group.organization, group.id);
      if (!before) return 'not_found';
      if (before.version !== group.version - 1) return 'conflict';
      if (groupExternalTaken(group)) return 'external_id_taken';
      groups.set(group.id, copy({ ...group, createdAt: before.createdAt }));
      return 'replaced';
    },
    async changeMembers(organization, id, change) {
      const members = groupOf(organization, id) && memberships.get(id);
      if (!members) return 'not_found';
      if (change.add.some((member) => !userOf(organization, member))) return 'unknown_member';
      const before = new Set(members);
      const adding = new Set(change.add);
      if (change.replace) members.clear();
      for (const member of change.remove) if (!adding.has(member)) members.delete(member);
      for (const member of adding) members.add(member);
      const changed = [...before].filter((member) => !members.has(member));
      for (const member of members) if (!before.has(member)) changed.push(member);
      return { changed };
    },
    async members(organization, id) {
      const members = groupOf(organization, id) && memberships.get(id);
      if (!members) return [];
      return [...members].sort().map((member) => ({ value: member, display: users.get(member)!.userName }));
    },
    async groupsOf(organization, userId) {
      return [...groups.values()]
        .filter((group) => group.organization === organization && memberships.get(group.id)?.has(userId))
        .map(({ id, displayName, externalId }) => ({ id, displayName, externalId }));
    },
    async deleteGroup(organization, id) {
      if (!groupOf(organization, id)) return false;
      memberships.delete(id);
      return groups.delete(id);
    },
    async counts(organization) {
      let userCount = 0;
      let groupCount = 0;
      for (const user of users.values()) if (user.organization === organization) userCount += 1;
      for (const group of groups.values()) if (group.organization === organization) groupCount += 1;
      return { users: userCount, groups: groupCount };
    },
  };
}

/** An in-memory {@link ScimStore}, for tests and single-process development. */
export function createMemoryScimStore(): ScimStore {
  const state = memoryState();
  return { ...memoryTokens(state), ...memoryUsers(state), ...memoryGroups(state) };
}

/** Whether every value can be stored (the SQL stores find nothing for one that cannot). */
export const storable = (...values: readonly string[]) => values.every(canBeStored);
