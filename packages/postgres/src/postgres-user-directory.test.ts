import { isDeskpilotError } from '@deskpilot/core';
import { testUserDirectory } from '@deskpilot/core/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresUserDirectory } from './postgres-user-directory.js';
import { testBackends, type TestDatabase } from './test-database.test-support.js';

const member = [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }];
const passwordHash = { cost: 1024 };
// Made by the earlier `hashPassword` (format `scrypt$N$r$p$salt$hash`) for "correct horse".
const legacyHash = 'scrypt$1024$8$1$INr8ieQ---QSm1PunO9u-w$EUvwS303eeyaw2c_pk1B8a07nDYqpIyMeQILoyBTCVI';
const storedHash = async (database: TestDatabase, id: string) =>
  (
    await database.client.query<{ password_hash: string }>('SELECT password_hash FROM deskpilot_users WHERE id = $1', [
      id,
    ])
  ).rows[0]?.password_hash;

for (const backend of testBackends) {
  for (const cache of [false, true]) {
    describe.skipIf(backend.skip)(`createPostgresUserDirectory${cache ? ' with cache' : ''} ${backend.name}`, () => {
      let database: TestDatabase;
      beforeAll(async () => {
        database = await backend.open();
      }, 60_000);
      afterAll(() => database?.close());
      const directory = () => createPostgresUserDirectory(database.client, { passwordHash, cache });

      testUserDirectory(async () => {
        await database.reset();
        return directory();
      });

      describe('Postgres specifics', () => {
        beforeEach(() => database.reset());

        it('keeps the user id when an email is re-added without one, so sessions survive re-seeding', async () => {
          const users = directory();
          const first = await users.addUser({
            email: 'rep@example.com',
            name: 'Rep',
            password: 'one',
            memberships: member,
          });
          const second = await users.addUser({
            email: 'rep@example.com',
            name: 'Rep Renamed',
            password: 'two',
            memberships: [],
          });
          expect(second.user.id).toBe(first.user.id);
          expect(await users.getAccount(first.user.id)).toEqual({
            user: { ...first.user, name: 'Rep Renamed' },
            memberships: [],
          });
        });

        it('lets replicas seed the same users at the same time', async () => {
          const users = directory();
          const seeds = Array.from({ length: 4 }, (_, index) =>
            users.addUser({
              id: 'u1',
              email: 'rep@example.com',
              name: `Rep ${index}`,
              password: 'pw',
              memberships: member,
            }),
          );
          await Promise.all(seeds);
          expect((await users.findCredentials('rep@example.com'))?.userId).toBe('u1');
          expect(await users.getAccount('u1')).toMatchObject({ memberships: member });
        });

        it('rolls a failed addUser back: the previous user stays, nothing half-written', async () => {
          const users = directory();
          await users.addUser({
            id: 'u1',
            email: 'rep@example.com',
            name: 'Rep',
            password: 'one',
            memberships: member,
          });
          const before = await storedHash(database, 'u1');
          // A membership without a role fails the last statement of the transaction.
          const broken = [{ projectKey: 'acme-b2c', clientId: 'acme' }] as unknown as typeof member;
          await expect(
            users.addUser({ id: 'u2', email: 'rep@example.com', name: 'Rep', password: 'two', memberships: broken }),
          ).rejects.toThrow();
          expect(await users.findCredentials('rep@example.com')).toEqual({ userId: 'u1', passwordHash: before });
          expect(await users.getAccount('u2')).toBeNull();
          expect(await users.getAccount('u1')).toMatchObject({ memberships: member });
        });

        it('hashes a plain password at its parameters, adds an existing hash as it is, and refuses one it cannot read', async () => {
          const users = directory();
          await users.addUser({ id: 'u0', email: 'plain@example.com', name: 'Plain', password: 'pw', memberships: [] });
          expect(await storedHash(database, 'u0')).toMatch(
            /^\$scrypt\$ln=10,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/,
          );
          await users.addUser({
            id: 'u1',
            email: 'rep@example.com',
            name: 'Rep',
            passwordHash: legacyHash,
            memberships: member,
          });
          expect(await storedHash(database, 'u1')).toBe(legacyHash);
          await expect(
            users.addUser({ id: 'u2', email: 'x@example.com', name: 'X', passwordHash: 'md5$abc', memberships: [] }),
          ).rejects.toThrow(TypeError);
          expect(await storedHash(database, 'u2')).toBeUndefined();
        });

        it('answers a corrupted account with store_unavailable, not a crash', async () => {
          const users = directory();
          await users.addUser({ id: 'u1', email: 'rep@example.com', name: 'Rep', password: 'pw', memberships: member });
          // Columns are NOT NULL; a hand edit that drops a constraint is how a membership loses its role.
          await database.client.query(`ALTER TABLE deskpilot_memberships ALTER COLUMN role DROP NOT NULL`);
          try {
            await database.client.query(`UPDATE deskpilot_memberships SET role = NULL WHERE user_id = 'u1'`);
            const error = await createPostgresUserDirectory(database.client, { passwordHash })
              .getAccount('u1')
              .catch((caught: unknown) => caught);
            expect(isDeskpilotError(error, 'store_unavailable')).toBe(true);
            expect((error as Error).message).toBe('A stored user is corrupted and cannot be read.');
          } finally {
            await database.client.query(`DELETE FROM deskpilot_memberships`);
            await database.client.query(`ALTER TABLE deskpilot_memberships ALTER COLUMN role SET NOT NULL`);
          }
        });
      });
    });
  }
}
