import { describe, expect, it } from 'vitest';
import type { ScimGroupRecord, ScimStore, ScimTokenRecord, ScimUserRecord } from './scim-store.js';

const token = (overrides: Partial<ScimTokenRecord> = {}): ScimTokenRecord => ({
  id: 'scimtok_1',
  organization: 'acme',
  hash: 'hash-1',
  name: 'Okta',
  createdAt: 1_000,
  lastUsedAt: null,
  ...overrides,
});

const user = (overrides: Partial<ScimUserRecord> = {}): ScimUserRecord => ({
  id: 'u-1',
  organization: 'acme',
  userId: 'account-1',
  userName: 'Ada@Acme.example',
  externalId: 'okta-1',
  active: true,
  attributes: { name: { givenName: 'Ada', familyName: 'L' }, emails: [{ value: 'ada@acme.example', primary: true }] },
  createdAt: 1_000,
  updatedAt: 1_000,
  version: 1,
  ...overrides,
});

const group = (overrides: Partial<ScimGroupRecord> = {}): ScimGroupRecord => ({
  id: 'g-1',
  organization: 'acme',
  displayName: 'Support Leads',
  externalId: 'okta-g-1',
  createdAt: 1_000,
  updatedAt: 1_000,
  version: 1,
  ...overrides,
});

const all = { startIndex: 1, count: 100 };
const hostile = ['nul\u0000', 'lone \ud800'];

/** Three users of `acme` (u-1, u-2, u-3) and one of `globex` (u-9). */
async function seed(store: ScimStore) {
  for (const [index, overrides] of [
    { id: 'u-1' },
    { id: 'u-2', userName: 'bo@acme.example', externalId: 'okta-2', userId: 'account-2' },
    { id: 'u-3', userName: 'cy@acme.example', externalId: null, userId: 'account-3' },
    { id: 'u-9', organization: 'globex', userName: 'ada@acme.example', userId: 'account-1' },
  ].entries())
    expect(await store.createUser(user({ ...overrides, createdAt: 1_000 + index }))).toBe('created');
}

/**
 * Conformance suite for a {@link ScimStore}: call it inside a test file with a factory returning a
 * fresh, empty store. It checks tokens, users and groups field for field, each uniqueness (also under
 * concurrency), replacement from the version read only, paging and filters, members kept to the
 * organisation's users, deletion cascading to memberships, and that hostile input is a miss.
 *
 * @example
 * testScimStore(() => createMemoryScimStore());
 */
export function testScimStore(make: () => ScimStore | Promise<ScimStore>): void {
  describe('ScimStore conformance', () => {
    tokens(make);
    users(make);
    groups(make);
  });
}

/** Tokens: found by digest, kept per organisation. */
function tokens(make: () => ScimStore | Promise<ScimStore>): void {
  it('keeps tokens by hash, per organisation, and their last use never moves back', async () => {
    const store = await make();
    expect(await store.addToken(token(), 2)).toBe('added');
    expect(await store.addToken(token({ id: 'scimtok_2', hash: 'hash-2', createdAt: 2_000 }), 2)).toBe('added');
    expect(await store.addToken(token({ id: 'scimtok_4', hash: 'hash-4' }), 2)).toBe('limit');
    expect(await store.addToken(token({ id: 'scimtok_3', organization: 'globex', hash: 'hash-3' }), 2)).toBe('added');
    expect(await store.tokenByHash('hash-1')).toEqual(token());
    expect(await store.tokenByHash('hash-x')).toBeNull();
    expect((await store.listTokens('acme')).map((record) => record.id)).toEqual(['scimtok_1', 'scimtok_2']);
    await store.tokenUsed('scimtok_1', 5_000);
    await store.tokenUsed('scimtok_1', 4_000);
    expect((await store.tokenByHash('hash-1'))?.lastUsedAt).toBe(5_000);
    expect(await store.deleteToken('globex', 'scimtok_1')).toBe(false);
    expect(await store.deleteToken('acme', 'scimtok_1')).toBe(true);
    expect(await store.deleteToken('acme', 'scimtok_1')).toBe(false);
    expect(await store.tokenByHash('hash-1')).toBeNull();
    for (const input of hostile) {
      expect(await store.tokenByHash(input)).toBeNull();
      expect(await store.deleteToken('acme', input)).toBe(false);
      await store.tokenUsed(input, 1);
    }
  });

  it('of concurrent additions at the limit, only as many as the limit are added', async () => {
    const store = await make();
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        store.addToken(token({ id: `scimtok_${index}`, hash: `hash-${index}` }), 2),
      ),
    );
    expect(outcomes.filter((outcome) => outcome === 'added')).toHaveLength(2);
    expect(await store.listTokens('acme')).toHaveLength(2);
  });
}

/** Users: each uniqueness, paging and filters, replacement from the version read. */
function users(make: () => ScimStore | Promise<ScimStore>): void {
  it('keeps a user field for field; userName (without case), externalId and account unique per organisation', async () => {
    const store = await make();
    await seed(store);
    expect(await store.getUser('acme', 'u-1')).toEqual(user());
    expect(await store.getUser('globex', 'u-1')).toBeNull();
    expect(
      await store.createUser(user({ id: 'u-4', userName: 'ADA@acme.EXAMPLE', externalId: null, userId: 'x' })),
    ).toBe('user_name_taken');
    expect(await store.createUser(user({ id: 'u-4', userName: 'new@acme.example', userId: 'x' }))).toBe(
      'external_id_taken',
    );
    expect(await store.createUser(user({ id: 'u-4', userName: 'new@acme.example', externalId: null }))).toBe(
      'account_taken',
    );
    expect((await store.userByAccount('acme', 'account-2'))?.id).toBe('u-2');
    expect(await store.userByAccount('initech', 'account-2')).toBeNull();
    expect(await store.counts('acme')).toEqual({ users: 3, groups: 0 });
  });

  it('of concurrent creations of one userName, one wins', async () => {
    const store = await make();
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        store.createUser(user({ id: `u-${index}`, userId: `account-${index}`, externalId: null })),
      ),
    );
    expect(outcomes.filter((outcome) => outcome === 'created')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome !== 'created')).toEqual(Array(7).fill('user_name_taken'));
  });

  it('lists in creation order, filters by userName (without case) and externalId, pages as SCIM counts', async () => {
    const store = await make();
    await seed(store);
    const ids = async (query: Parameters<ScimStore['listUsers']>[1], organization = 'acme') => {
      const result = await store.listUsers(organization, query);
      return { total: result.total, ids: result.resources.map((record) => record.id) };
    };
    expect(await ids(all)).toEqual({ total: 3, ids: ['u-1', 'u-2', 'u-3'] });
    expect(await ids({ startIndex: 2, count: 1 })).toEqual({ total: 3, ids: ['u-2'] });
    expect(await ids({ startIndex: 3, count: 5 })).toEqual({ total: 3, ids: ['u-3'] });
    expect(await ids({ startIndex: 9, count: 5 })).toEqual({ total: 3, ids: [] });
    expect(await ids({ startIndex: 1, count: 0 })).toEqual({ total: 3, ids: [] });
    expect(await ids({ ...all, filter: { attribute: 'userName', value: 'ADA@acme.example' } })).toEqual({
      total: 1,
      ids: ['u-1'],
    });
    expect(await ids({ ...all, filter: { attribute: 'externalId', value: 'okta-2' } })).toEqual({
      total: 1,
      ids: ['u-2'],
    });
    expect(await ids({ ...all, filter: { attribute: 'externalId', value: 'OKTA-2' } })).toEqual({
      total: 0,
      ids: [],
    });
    for (const value of hostile)
      expect(await ids({ ...all, filter: { attribute: 'userName', value } })).toEqual({ total: 0, ids: [] });
  });

  it('replaces a user only from the version read, keeping its account, organisation and creation', async () => {
    const store = await make();
    await seed(store);
    const next = user({
      userName: 'ada.l@acme.example',
      active: false,
      userId: 'other',
      updatedAt: 2_000,
      version: 2,
    });
    expect(await store.replaceUser(next)).toBe('replaced');
    expect(await store.getUser('acme', 'u-1')).toEqual({ ...next, userId: 'account-1' });
    expect(await store.replaceUser({ ...next, version: 2 })).toBe('conflict');
    expect(
      await store.replaceUser(user({ id: 'u-2', userName: 'ADA.L@acme.example', externalId: 'okta-2', version: 2 })),
    ).toBe('user_name_taken');
    expect(
      await store.replaceUser(user({ id: 'u-2', userName: 'bo@acme.example', externalId: 'okta-1', version: 2 })),
    ).toBe('external_id_taken');
    expect(await store.replaceUser(user({ id: 'u-1', organization: 'globex', version: 3 }))).toBe('not_found');
    const racing = await Promise.all(
      [3, 3, 3].map((version, index) => store.replaceUser({ ...next, externalId: `x-${index}`, version })),
    );
    expect(racing.filter((outcome) => outcome === 'replaced')).toHaveLength(1);
  });
}

/** Groups and their members: kept to the organisation's users, deleted with the user or the group. */
function groups(make: () => ScimStore | Promise<ScimStore>): void {
  it('keeps a group and its members, only users of its organisation, and the groups of a user', async () => {
    const store = await make();
    await seed(store);
    expect(await store.createGroup(group(), ['u-2', 'u-1'])).toBe('created');
    expect(await store.createGroup(group({ id: 'g-2', externalId: null }), ['u-9'])).toBe('unknown_member');
    expect(await store.getGroup('acme', 'g-2')).toBeNull();
    expect(await store.createGroup(group({ id: 'g-2' }), [])).toBe('external_id_taken');
    expect(await store.createGroup(group({ id: 'g-2', displayName: 'Agents', externalId: null }), ['u-3'])).toBe(
      'created',
    );
    expect(await store.getGroup('acme', 'g-1')).toEqual(group());
    expect(await store.getGroup('globex', 'g-1')).toBeNull();
    expect(await store.members('acme', 'g-1')).toEqual([
      { value: 'u-1', display: 'Ada@Acme.example' },
      { value: 'u-2', display: 'bo@acme.example' },
    ]);
    expect(await store.groupsOf('acme', 'u-1')).toEqual([
      { id: 'g-1', displayName: 'Support Leads', externalId: 'okta-g-1' },
    ]);
    const listed = await store.listGroups('acme', { ...all, filter: { attribute: 'displayName', value: 'Agents' } });
    expect(listed.resources.map((record) => record.id)).toEqual(['g-2']);
    expect((await store.listGroups('acme', all)).total).toBe(2);
    expect(await store.counts('acme')).toEqual({ users: 3, groups: 2 });
  });

  it('adds, removes and replaces members in one step; a user of another organisation changes nothing', async () => {
    const store = await make();
    await seed(store);
    await store.createGroup(group(), ['u-1']);
    const changed = async (change: Parameters<ScimStore['changeMembers']>[2]) => {
      const outcome = await store.changeMembers('acme', 'g-1', change);
      return typeof outcome === 'string' ? outcome : outcome.changed.sort();
    };
    expect(await changed({ add: ['u-2', 'u-3'], remove: ['u-1', 'u-9', 'nobody'] })).toEqual(['u-1', 'u-2', 'u-3']);
    expect((await store.members('acme', 'g-1')).map((member) => member.value)).toEqual(['u-2', 'u-3']);
    expect(await changed({ add: ['u-9', 'u-1'], remove: ['u-2'] })).toBe('unknown_member');
    expect((await store.members('acme', 'g-1')).map((member) => member.value)).toEqual(['u-2', 'u-3']);
    expect(await changed({ add: ['u-1', 'u-2'], remove: [], replace: true })).toEqual(['u-1', 'u-3']);
    expect((await store.members('acme', 'g-1')).map((member) => member.value)).toEqual(['u-1', 'u-2']);
    expect(await changed({ add: ['u-1'], remove: [] })).toEqual([]);
    expect(await changed({ add: ['u-3'], remove: ['u-3', 'u-2'] })).toEqual(['u-2', 'u-3']);
    expect(await store.changeMembers('globex', 'g-1', { add: [], remove: [] })).toBe('not_found');
    for (const input of hostile)
      expect(await store.changeMembers('acme', 'g-1', { add: [input], remove: [input] })).toBe('unknown_member');
  });

  it('replaces a group from the version read; deletes a user out of its groups, and a group with its members', async () => {
    const store = await make();
    await seed(store);
    await store.createGroup(group(), ['u-1', 'u-2']);
    const renamed = group({ displayName: 'Leads', externalId: null, updatedAt: 2_000, version: 2 });
    expect(await store.replaceGroup(renamed)).toBe('replaced');
    expect(await store.getGroup('acme', 'g-1')).toEqual(renamed);
    expect(await store.replaceGroup(renamed)).toBe('conflict');
    expect(await store.deleteUser('globex', 'u-1')).toBe(false);
    expect(await store.deleteUser('acme', 'u-1')).toBe(true);
    expect(await store.getUser('acme', 'u-1')).toBeNull();
    // The running totals follow deletions too: what a provider pages by.
    expect(await store.counts('acme')).toEqual({ users: 2, groups: 1 });
    expect((await store.listUsers('acme', all)).total).toBe(2);
    expect((await store.members('acme', 'g-1')).map((member) => member.value)).toEqual(['u-2']);
    expect(await store.deleteGroup('acme', 'g-1')).toBe(true);
    expect(await store.deleteGroup('acme', 'g-1')).toBe(false);
    expect(await store.counts('acme')).toEqual({ users: 2, groups: 0 });
    expect((await store.listGroups('acme', all)).total).toBe(0);
    expect(await store.groupsOf('acme', 'u-2')).toEqual([]);
    expect(await store.members('acme', 'g-1')).toEqual([]);
    for (const input of hostile) {
      expect(await store.getUser('acme', input)).toBeNull();
      expect(await store.getGroup(input, 'g-1')).toBeNull();
      expect(await store.userByAccount('acme', input)).toBeNull();
      expect(await store.deleteUser('acme', input)).toBe(false);
      expect(await store.deleteGroup('acme', input)).toBe(false);
      expect(await store.groupsOf('acme', input)).toEqual([]);
    }
  });
}
