import {
  testAccountTokenStore,
  testAuditStore,
  testInvitationStore,
  testOrganizationStore,
  testRolePolicyStore,
  testTeamDirectory,
  testApprovalAudit,
  testApprovalStore,
  testChatStore,
  testInputConformance,
  testSessionLookup,
  testSessionStore,
  testUserDirectory,
} from '@deskpilot/core/testing';
import { auditColumns, auditRowValues } from '@deskpilot/core/storage';
import { afterEach, describe, expect, it } from 'vitest';
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
  testAccountTokenStore(async () => (await stores()).accountTokenStore);
  {
    let database: SqliteDatabase | undefined;
    testAuditStore(
      async () => {
        database = await openSqliteDatabase();
        opened.push(database);
        return createSqliteStores(database, { passwordHash: { cost: 1024 } }).auditStore;
      },
      {
        insertBehindTheTrail: async (record) =>
          void database!
            .statement(`INSERT INTO deskpilot_audit (${auditColumns.join(', ')}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
            .run(...auditRowValues(record)),
      },
    );
  }
  testInvitationStore(async () => {
    const { invitationStore, auditStore } = await stores();
    return { store: invitationStore, audit: auditStore };
  });
  testOrganizationStore(async () => (await stores()).organizationStore);
  testRolePolicyStore(async () => {
    const { rolePolicyStore, auditStore } = await stores();
    return { store: rolePolicyStore, audit: auditStore };
  });
  testTeamDirectory(async () => {
    const { userDirectory, auditStore } = await stores();
    return { directory: userDirectory, audit: auditStore };
  });
  testSessionLookup(async () => {
    const { sessionLookup, sessionStore, userDirectory } = await stores();
    return { lookup: sessionLookup, store: sessionStore, directory: userDirectory };
  });
  testChatStore(async () => (await stores()).chatStore);
  testApprovalStore(async () => (await stores()).approvalStore);
  testApprovalAudit(async () => {
    const { approvalStore, auditStore } = await stores();
    return { store: approvalStore, audit: auditStore };
  });
  testInputConformance({
    chatStore: async () => (await stores()).chatStore,
    approvalStore: async () => (await stores()).approvalStore,
    sessionStore: async () => (await stores()).sessionStore,
    userDirectory: async () => (await stores()).userDirectory,
  });
});

describe('SQLite chat store: previews', () => {
  it('lists a message written before schema 5 (no preview) with the text read from the message', async () => {
    const database = await openSqliteDatabase();
    opened.push(database);
    const { chatStore } = createSqliteStores(database, { passwordHash: { cost: 1024 } });
    const owner = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };
    const { session } = await chatStore.getOrCreateSession({
      id: crypto.randomUUID(),
      ...owner,
      createdAt: 1,
      updatedAt: 1,
    });
    await chatStore.addMessage(session.id, {
      id: 'm1',
      role: 'user',
      parts: [{ type: 'text', text: 'Where is 🚚 ORD-1001?' }],
    });
    const list = async () =>
      (await chatStore.listSessions({ ...owner, archived: false, limit: 10 }))[0]!.lastMessageText;
    expect(await list()).toBe('Where is 🚚 ORD-1001?');
    database.statement('UPDATE deskpilot_chat_messages SET preview = NULL').run();
    expect(database.statement('SELECT preview FROM deskpilot_chat_messages').all()).toEqual([{ preview: null }]);
    expect(await list()).toBe('Where is 🚚 ORD-1001?');
  });
});
