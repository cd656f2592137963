import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeSessionRecord } from '@deskpilot/core/testing';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createSqliteStores } from './create-sqlite-stores.js';
import { openSqliteDatabase, type SqliteDatabase } from './open-sqlite-database.js';
import { createSqliteSessionLookup } from './sqlite-session-lookup.js';

const alice = {
  id: 'usr_alice',
  email: 'alice@example.com',
  name: 'Alice',
  passwordHash: '$scrypt$ln=10,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB',
  memberships: [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'admin' }],
};

/** Two handles on one file: as two processes (or two services in one) share it. */
async function twoHandles() {
  const folder = mkdtempSync(join(tmpdir(), 'deskpilot-lookup-'));
  const file = join(folder, 'deskpilot.sqlite');
  const [here, there] = [await openSqliteDatabase({ file }), await openSqliteDatabase({ file })];
  onTestFinished(async () => {
    await Promise.all([here.close(), there.close()]);
    rmSync(folder, { recursive: true, force: true });
  });
  return { here, there };
}

/** `database`, counting the lookups' reads of session rows. */
function countingReads(database: SqliteDatabase) {
  const counter = { reads: 0 };
  const counted: SqliteDatabase = {
    ...database,
    statement(sql) {
      if (sql.includes('FROM deskpilot_sessions s')) counter.reads++;
      return database.statement(sql);
    },
  };
  return { counted, counter };
}

describe('createSqliteSessionLookup', () => {
  it('answers a hot session from memory until anything in the database changes', async () => {
    const { here } = await twoHandles();
    const stores = createSqliteStores(here);
    await stores.userDirectory.addUser(alice);
    const record = makeSessionRecord({ userId: alice.id });
    await stores.sessionStore.create(record);
    const { counted, counter } = countingReads(here);
    const lookup = createSqliteSessionLookup(counted);

    const first = await lookup.getSessionAndAccount(record.id);
    expect(first?.record).toEqual(record);
    expect(await lookup.getSessionAndAccount(record.id)).toBe(first);
    expect(counter.reads).toBe(1);
    expect(Object.isFrozen(first) && Object.isFrozen(first!.record)).toBe(true);

    await stores.sessionStore.touch(record.id, record.version, record.idleExpiresAt + 1);
    expect((await lookup.getSessionAndAccount(record.id))?.record.version).toBe(record.version + 1);
    expect(counter.reads).toBe(2);
  });

  it('sees a revocation or a role change made through another handle (another process) at once', async () => {
    const { here, there } = await twoHandles();
    const [local, remote] = [createSqliteStores(here), createSqliteStores(there)];
    await local.userDirectory.addUser(alice);
    const [kept, revoked] = [makeSessionRecord({ userId: alice.id }), makeSessionRecord({ userId: alice.id })];
    await local.sessionStore.create(kept);
    await local.sessionStore.create(revoked);
    expect(await local.sessionLookup.getSessionAndAccount(revoked.id)).not.toBeNull();
    expect((await local.sessionLookup.getSessionAndAccount(kept.id))?.account?.memberships[0]?.role).toBe('admin');

    await remote.sessionStore.delete(revoked.id);
    await remote.userDirectory.addUser({ ...alice, memberships: [{ ...alice.memberships[0]!, role: 'viewer' }] });
    expect(await local.sessionLookup.getSessionAndAccount(revoked.id)).toBeNull();
    expect((await local.sessionLookup.getSessionAndAccount(kept.id))?.account?.memberships[0]?.role).toBe('viewer');
  });

  it('keeps at most maxCached answers, the oldest going first, and none with 0', async () => {
    const { here } = await twoHandles();
    const stores = createSqliteStores(here);
    await stores.userDirectory.addUser(alice);
    const records = [1, 2, 3].map(() => makeSessionRecord({ userId: alice.id }));
    for (const record of records) await stores.sessionStore.create(record);

    const bounded = countingReads(here);
    const lookup = createSqliteSessionLookup(bounded.counted, { maxCached: 2 });
    for (const record of records) await lookup.getSessionAndAccount(record.id);
    await lookup.getSessionAndAccount(records[2]!.id); // kept
    await lookup.getSessionAndAccount(records[0]!.id); // gone: read again
    expect(bounded.counter.reads).toBe(4);

    const uncached = countingReads(here);
    const none = createSqliteSessionLookup(uncached.counted, { maxCached: 0 });
    await none.getSessionAndAccount(records[0]!.id);
    await none.getSessionAndAccount(records[0]!.id);
    expect(uncached.counter.reads).toBe(2);
  });
});
