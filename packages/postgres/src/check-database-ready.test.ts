import { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { checkDatabaseReady } from './check-database-ready.js';
import { fromPglite } from './from-pglite.js';
import { migrate } from './migrate.js';
import { migrations, type Migration } from './migrations.js';
import { openDatabase } from './open-database.js';
import { databaseUrl, onPostgres, openTestSchema } from './test-database.test-support.js';

const latest = Math.max(...migrations.map((migration) => migration.version));
const next: Migration = { version: latest + 1, name: 'a later release', statements: ['SELECT 1'] };

describe('checkDatabaseReady on PGlite', () => {
  it('rejects before the migrations ran, resolves after, and rejects when this release expects a later version', async () => {
    const client = fromPglite(await PGlite.create());
    try {
      await expect(checkDatabaseReady(client)).rejects.toMatchObject({ code: 'store_unavailable' });
      await migrate(client);
      await expect(checkDatabaseReady(client)).resolves.toBeUndefined();
      await expect(checkDatabaseReady(client, { migrations: [...migrations, next] })).rejects.toMatchObject({
        code: 'store_unavailable',
        detail: `The database schema is at version ${latest}, this release needs ${latest + 1}: run the migrations.`,
      });
    } finally {
      await client.close();
    }
  });

  it('is what an opened database answers checkReady with, and a closed one fails it', async () => {
    const database = await openDatabase();
    await expect(database.checkReady()).resolves.toBeUndefined();
    await database.close();
    await expect(database.checkReady()).rejects.toThrow();
  });
});

describe.skipIf(!databaseUrl)(`checkDatabaseReady ${onPostgres}`, () => {
  it('resolves on a migrated schema and rejects on an unmigrated one', async () => {
    const migrated = await openTestSchema();
    const empty = await openTestSchema({ migrate: false });
    try {
      await expect(checkDatabaseReady(migrated.client)).resolves.toBeUndefined();
      await expect(checkDatabaseReady(empty.client)).rejects.toMatchObject({ code: 'store_unavailable' });
      await expect(checkDatabaseReady(migrated.client, { migrations: [...migrations, next] })).rejects.toMatchObject({
        code: 'store_unavailable',
      });
    } finally {
      await migrated.close();
      await empty.close();
    }
  });
});
