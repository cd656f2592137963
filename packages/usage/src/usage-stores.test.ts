import { openTestDatabase } from '@deskpilot/postgres/testing';
import { openSqliteDatabase } from '@deskpilot/sqlite';
import { afterAll, describe } from 'vitest';
import { createPostgresUsageStore, usageSchema } from './postgres.js';
import { createSqliteUsageStore, usageSchema as sqliteUsageSchema } from './sqlite.js';
import { testUsageStore } from './test-usage-store.js';
import { createMemoryUsageStore } from './usage-store.js';

const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers) await close();
});

describe('usage roll-ups in memory', () => testUsageStore(() => createMemoryUsageStore()));

describe('usage roll-ups on SQLite', () =>
  testUsageStore(async () => {
    const database = await openSqliteDatabase({ modules: [sqliteUsageSchema] });
    closers.push(() => database.close());
    return createSqliteUsageStore(database);
  }));

describe('usage roll-ups on PGlite', () =>
  testUsageStore(async () => {
    const database = await openTestDatabase({ modules: [usageSchema] });
    closers.push(() => database.close());
    return createPostgresUsageStore(database.client);
  }));

describe.skipIf(!process.env.DATABASE_URL)('usage roll-ups on Postgres', () =>
  testUsageStore(async () => {
    const database = await openTestDatabase({ databaseUrl: process.env.DATABASE_URL, modules: [usageSchema] });
    closers.push(() => database.close());
    return createPostgresUsageStore(database.client);
  }),
);
