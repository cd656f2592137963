import {
  testApprovalStore,
  testChatStore,
  testInputConformance,
  testSessionLookup,
  testSessionStore,
  testUserDirectory,
} from '@deskpilot/core/testing';
import { afterEach, describe } from 'vitest';
import { createSqliteStores } from './create-sqlite-stores.js';
import { openSqliteDatabase, type SqliteDatabase } from './open-sqlite-database.js';

// The same conformance suites as the memory, PGlite and Postgres stores, each test on a fresh database.
const opened: SqliteDatabase[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((database) => database.close()));
});
async function stores() {
  const database = await openSqliteDatabase();
  opened.push(database);
  return createSqliteStores(database, { passwordHash: { cost: 1024 } });
}

describe('SQLite stores', () => {
  testSessionStore(async () => (await stores()).sessionStore);
  testUserDirectory(async () => (await stores()).userDirectory);
  testSessionLookup(async () => {
    const { sessionLookup, sessionStore, userDirectory } = await stores();
    return { lookup: sessionLookup, store: sessionStore, directory: userDirectory };
  });
  testChatStore(async () => (await stores()).chatStore);
  testApprovalStore(async () => (await stores()).approvalStore);
  testInputConformance({
    chatStore: async () => (await stores()).chatStore,
    approvalStore: async () => (await stores()).approvalStore,
    sessionStore: async () => (await stores()).sessionStore,
    userDirectory: async () => (await stores()).userDirectory,
  });
});
