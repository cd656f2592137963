import * as crypto from 'node:crypto';
import { isDeskpilotError } from '@deskpilot/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createPostgresUserDirectory } from './postgres-user-directory.js';
import { testBackends, type TestDatabase } from './test-database.test-support.js';

// Count scrypt runs (and their cost) to show that every login path does the same work.
vi.mock(import('node:crypto'), async (importOriginal) => {
  const actual = await importOriginal();
  return { ...actual, scrypt: vi.fn(actual.scrypt) as unknown as typeof actual.scrypt };
});
const scrypt = vi.mocked(crypto.scrypt);

const member = [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }];
const passwordHash = { cost: 1024 };
// Made by the earlier `hashPassword` (format `scrypt$N$r$p$salt$hash`) for "correct horse".
const legacyHash = 'scrypt$1024$8$1$INr8ieQ---QSm1PunO9u-w$EUvwS303eeyaw2c_pk1B8a07nDYqpIyMeQILoyBTCVI';
const storedHash = async (database: TestDatabase, id: string) =>
  (await database.client.query<{ password_hash: string }>('SELECT password_hash FROM deskpilot_users WHERE id = $1', [id])).rows[0]?.password_hash;

for (const backend of testBackends) {
  for (const cache of [false, true]) {
    describe.skipIf(backend.skip)(`createPostgresUserDirectory${cache ? ' with cache' : ''} ${backend.name}`, () => {
      let database: TestDatabase;
      beforeAll(async () => {
        database = await backend.open();
      }, 60_000);
      afterAll(() => database?.close());
      beforeEach(async () => {
        await database.reset();
        scrypt.mockClear();
      });
      const directory = () => createPostgresUserDirectory(database.client, { passwordHash, cache });

      it('verifies the right password and returns the account with memberships, in order', async () => {
        const users = directory();
        const memberships = [...member, { projectKey: 'acme-b2b', clientId: 'acme', role: 'admin' }, { projectKey: 'globex', clientId: 'globex', role: 'viewer' }];
        await users.addUser({ id: 'u1', email: ' Rep@Example.COM', name: 'Rep', password: 'correct horse', memberships });
        const expected = { user: { id: 'u1', email: 'rep@example.com', name: 'Rep' }, memberships };
        expect(await users.verifyCredentials('REP@example.com ', 'correct horse')).toEqual(expected);
        expect(await users.verifyCredentials('rep@example.com', 'Correct horse')).toBeNull();
        expect(await users.getAccount('u1')).toEqual(expected);
        expect(await users.getAccount('u2')).toBeNull();
      });

      it('does the same scrypt work for an unknown email as for a wrong password', async () => {
        const users = createPostgresUserDirectory(database.client, { passwordHash: { cost: 2048 }, cache });
        await users.addUser({ email: 'rep@example.com', name: 'Rep', password: 'correct horse', memberships: member });
        await users.verifyCredentials('nobody@example.com', 'warm-up'); // the decoy hash is built once
        scrypt.mockClear();

        expect(await users.verifyCredentials('rep@example.com', 'wrong')).toBeNull();
        const wrongPassword = scrypt.mock.calls.map((call) => call[3]);
        scrypt.mockClear();
        expect(await users.verifyCredentials('nobody@example.com', 'wrong')).toBeNull();
        const unknownEmail = scrypt.mock.calls.map((call) => call[3]);

        expect(wrongPassword).toHaveLength(1);
        expect(unknownEmail).toEqual(wrongPassword); // same count, same cost parameters
      });

      it('replaces a user added again with the same email', async () => {
        const users = directory();
        await users.addUser({ id: 'old', email: 'rep@example.com', name: 'Rep', password: 'one', memberships: member });
        await users.getAccount('old');
        await users.addUser({ id: 'new', email: 'REP@example.com', name: 'Rep', password: 'two', memberships: [] });
        expect(await users.verifyCredentials('rep@example.com', 'one')).toBeNull();
        expect((await users.verifyCredentials('rep@example.com', 'two'))?.user.id).toBe('new');
        expect(await users.getAccount('old')).toBeNull();
        expect(await users.getAccount('new')).toEqual({ user: { id: 'new', email: 'rep@example.com', name: 'Rep' }, memberships: [] });
      });

      it('keeps the user id when an email is re-added without one, so sessions survive re-seeding', async () => {
        const users = directory();
        const first = await users.addUser({ email: 'rep@example.com', name: 'Rep', password: 'one', memberships: member });
        const second = await users.addUser({ email: 'rep@example.com', name: 'Rep Renamed', password: 'two', memberships: [] });
        expect(second.user.id).toBe(first.user.id);
        expect(await users.getAccount(first.user.id)).toEqual({ user: { ...first.user, name: 'Rep Renamed' }, memberships: [] });
      });

      it('lets replicas seed the same users at the same time', async () => {
        const users = directory();
        const seeds = Array.from({ length: 4 }, (_, index) => users.addUser({ id: 'u1', email: 'rep@example.com', name: `Rep ${index}`, password: 'pw', memberships: member }));
        await Promise.all(seeds);
        expect((await users.verifyCredentials('rep@example.com', 'pw'))?.user.id).toBe('u1');
      });

      it('hands out accounts nobody can change, without the password hash', async () => {
        const users = directory();
        const memberships = [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }];
        await users.addUser({ id: 'u1', email: 'rep@example.com', name: 'Rep', password: 'pw', memberships });
        memberships[0]!.role = 'admin';
        const account = (await users.getAccount('u1'))!;
        expect(() => {
          account.memberships[0]!.role = 'admin';
        }).toThrow(TypeError);
        expect((await users.getAccount('u1'))!.memberships[0]!.role).toBe('agent');
        expect(JSON.stringify(account)).not.toContain('scrypt');
        expect(JSON.stringify(await users.verifyCredentials('rep@example.com', 'pw'))).not.toContain('scrypt');
      });

      it('rolls a failed addUser back: the previous user stays, nothing half-written', async () => {
        const users = directory();
        await users.addUser({ id: 'u1', email: 'rep@example.com', name: 'Rep', password: 'one', memberships: member });
        // A membership without a role fails the last statement of the transaction.
        const broken = [{ projectKey: 'acme-b2c', clientId: 'acme' }] as unknown as typeof member;
        await expect(users.addUser({ id: 'u2', email: 'rep@example.com', name: 'Rep', password: 'two', memberships: broken })).rejects.toThrow();
        expect((await users.verifyCredentials('rep@example.com', 'one'))?.user.id).toBe('u1');
        expect(await users.getAccount('u2')).toBeNull();
        expect(await users.getAccount('u1')).toMatchObject({ memberships: member });
      });

      it('verifies a stored hash of the earlier format and upgrades the row on the next successful login', async () => {
        const users = createPostgresUserDirectory(database.client, { passwordHash: { cost: 2048 }, cache });
        await users.addUser({ id: 'u1', email: 'rep@example.com', name: 'Rep', password: 'placeholder', memberships: member });
        // A row written before the PHC format.
        await database.client.query('UPDATE deskpilot_users SET password_hash = $1', [legacyHash]);
        expect(await users.verifyCredentials('rep@example.com', 'wrong')).toBeNull();
        expect(await storedHash(database, 'u1')).toBe(legacyHash);
        expect((await users.verifyCredentials('rep@example.com', 'correct horse'))?.user.id).toBe('u1');
        const upgraded = await storedHash(database, 'u1');
        expect(upgraded).toMatch(/^\$scrypt\$ln=11,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
        scrypt.mockClear();
        expect((await users.verifyCredentials('rep@example.com', 'correct horse'))?.user.id).toBe('u1');
        expect(scrypt).toHaveBeenCalledTimes(1); // nothing left to upgrade
        expect(await storedHash(database, 'u1')).toBe(upgraded);
      });

      it('adds a user with an existing hash as it is, and refuses one it cannot read', async () => {
        const users = directory();
        await users.addUser({ id: 'u1', email: 'rep@example.com', name: 'Rep', passwordHash: legacyHash, memberships: member });
        expect(await storedHash(database, 'u1')).toBe(legacyHash);
        await expect(users.addUser({ id: 'u2', email: 'x@example.com', name: 'X', passwordHash: 'md5$abc', memberships: [] })).rejects.toThrow(TypeError);
        expect(await storedHash(database, 'u2')).toBeUndefined();
      });

      it('does not overwrite a password changed while a login was upgrading the old hash', async () => {
        const client = database.client;
        const users = directory();
        await users.addUser({ id: 'u1', email: 'rep@example.com', name: 'Rep', passwordHash: legacyHash, memberships: member });
        // Change the password right before the upgrade's UPDATE runs: the worst moment.
        let changed = false;
        const racing = createPostgresUserDirectory(
          {
            ...client,
            query: async (sql, params) => {
              if (sql.startsWith('UPDATE deskpilot_users SET password_hash') && !changed) {
                changed = true;
                await users.addUser({ id: 'u1', email: 'rep@example.com', name: 'Rep', password: 'new password', memberships: member });
              }
              return client.query(sql, params);
            },
          } as typeof client,
          { passwordHash, cache },
        );
        expect((await racing.verifyCredentials('rep@example.com', 'correct horse'))?.user.id).toBe('u1');
        expect(changed).toBe(true);
        expect(await users.verifyCredentials('rep@example.com', 'correct horse')).toBeNull();
        expect((await users.verifyCredentials('rep@example.com', 'new password'))?.user.id).toBe('u1');
      });

      it('answers a corrupted account with store_unavailable, not a crash', async () => {
        const users = directory();
        await users.addUser({ id: 'u1', email: 'rep@example.com', name: 'Rep', password: 'pw', memberships: member });
        // Columns are NOT NULL; a hand edit that drops a constraint is how a membership loses its role.
        await database.client.query(`ALTER TABLE deskpilot_memberships ALTER COLUMN role DROP NOT NULL`);
        try {
          await database.client.query(`UPDATE deskpilot_memberships SET role = NULL WHERE user_id = 'u1'`);
          const error = await createPostgresUserDirectory(database.client, { passwordHash }).getAccount('u1').catch((caught: unknown) => caught);
          expect(isDeskpilotError(error, 'store_unavailable')).toBe(true);
          expect((error as Error).message).toBe('A stored user is corrupted and cannot be read.');
        } finally {
          await database.client.query(`DELETE FROM deskpilot_memberships`);
          await database.client.query(`ALTER TABLE deskpilot_memberships ALTER COLUMN role SET NOT NULL`);
        }
      });
    });
  }
}
