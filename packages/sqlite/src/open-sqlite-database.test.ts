import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { isDeskpilotError } from '@deskpilot/core';
import { makeSessionRecord } from '@deskpilot/core/testing';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createSqliteStores } from './create-sqlite-stores.js';
import { sqliteMigrations } from './migrations.js';
import { openSqliteDatabase } from './open-sqlite-database.js';

function directory(): string {
  const path = mkdtempSync(join(tmpdir(), 'deskpilot-sqlite-'));
  onTestFinished(() => rmSync(path, { recursive: true, force: true }));
  return path;
}

/**
 * Runs `body` in another Node process (on the built package) with `database` and `stores` open on
 * `file`; resolves with its first line.
 */
function inProcess(file: string, body: string) {
  const script = `
    const { openSqliteDatabase, createSqliteStores } = await import('@deskpilot/sqlite');
    const database = await openSqliteDatabase({ file: ${JSON.stringify(file)} });
    const stores = createSqliteStores(database);
    ${body}
    process.stdin.resume();`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  onTestFinished(() => void child.kill('SIGKILL'));
  const line = once(child.stdout, 'data').then(([data]) => String(data).trim());
  return { child, line };
}

const approval = (id: string) => ({
  id,
  chatSessionId: 'chat-1',
  userEmail: 'rep@example.com',
  projectKey: 'acme-b2c',
  toolName: 'refundOrder',
  toolCallId: 'call-1',
  input: { orderId: 'ORD-1001' },
  inputHash: 'hash',
  capabilities: { canRefundOrders: true },
  state: 'pending' as const,
  outcome: null,
  reason: null,
  createdAt: 1_000,
  expiresAt: Date.now() + 60_000,
  decision: null,
});

describe('openSqliteDatabase', () => {
  it('keeps every committed write when the process is killed (SIGKILL) right after it', async () => {
    const file = join(directory(), 'data', 'deskpilot.sqlite');
    const record = makeSessionRecord();
    const writer = inProcess(
      file,
      `await stores.sessionStore.create(${JSON.stringify(record)});
       await stores.chatStore.openSession({ id: 'chat-1', userEmail: 'rep@example.com', projectKey: 'acme-b2c', createdAt: 1, updatedAt: 1 },
         { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Where is ORD-1001?' }] });
       console.log('written');`,
    );
    expect(await writer.line).toBe('written');
    writer.child.kill('SIGKILL');
    await once(writer.child, 'exit');

    const database = await openSqliteDatabase({ file });
    onTestFinished(() => database.close());
    const stores = createSqliteStores(database);
    expect(await stores.sessionStore.get(record.id)).toEqual(record);
    expect(await stores.chatStore.getMessages('chat-1')).toEqual([
      { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Where is ORD-1001?' }] },
    ]);
  });

  it('lets processes share one file: each sees the others’ writes at once, and of racing claims exactly one wins', async () => {
    const file = join(directory(), 'deskpilot.sqlite');
    const database = await openSqliteDatabase({ file });
    onTestFinished(() => database.close());
    const stores = createSqliteStores(database);
    await stores.approvalStore.create(approval('approval-1'));
    const racers = Array.from(
      { length: 4 },
      () =>
        inProcess(
          file,
          `const claimed = await stores.approvalStore.transition('approval-1', 'pending', 'executing');
           console.log(claimed ? 'claimed' : 'lost');`,
        ).line,
    );
    const answers = await Promise.all(racers);
    expect(answers.filter((answer) => answer === 'claimed')).toHaveLength(1);
    expect(answers.filter((answer) => answer === 'lost')).toHaveLength(3);
    expect((await stores.approvalStore.get('approval-1'))?.state).toBe('executing');
  }, 30_000);

  it('answers 503 within the busy timeout while another connection holds the write lock, and still serves reads', async () => {
    const file = join(directory(), 'deskpilot.sqlite');
    const database = await openSqliteDatabase({ file, busyTimeoutMs: 100 });
    onTestFinished(() => database.close());
    const stores = createSqliteStores(database);
    const record = makeSessionRecord();
    await stores.sessionStore.create(record);
    const holder = new DatabaseSync(file);
    holder.exec('BEGIN IMMEDIATE');
    onTestFinished(() => holder.close());

    // A renewal is not written inside the call that asks for it (a read must never wait on a lock)...
    const renewal = stores.sessionStore.renew!(record.id, record.idleExpiresAt + 1);
    expect(await stores.sessionStore.get(record.id)).toEqual(record);
    // ...and a write that finds the lock taken gives up after the busy timeout, as a 503.
    const error = await renewal.catch((caught: unknown) => caught);
    expect(isDeskpilotError(error) && error.code).toBe('store_unavailable');
    const write = await stores.sessionStore
      .touch(record.id, 1, record.idleExpiresAt + 2)
      .catch((caught: unknown) => caught);
    expect(isDeskpilotError(write) && write.code).toBe('store_unavailable');

    holder.exec('ROLLBACK');
    const idleExpiry = () =>
      database.statement('SELECT idle_expires_at FROM deskpilot_sessions WHERE id = ?').get(record.id)!.idle_expires_at;
    const renewed = stores.sessionStore.renew!(record.id, record.idleExpiresAt + 3);
    expect(idleExpiry()).toBe(record.idleExpiresAt); // written after this turn of the event loop
    await renewed;
    expect(idleExpiry()).toBe(record.idleExpiresAt + 3);
  });

  it('creates the schema once, is ready at this release’s version, and refuses a file from a newer release', async () => {
    const file = join(directory(), 'deskpilot.sqlite');
    const [first, second] = await Promise.all([openSqliteDatabase({ file }), openSqliteDatabase({ file })]);
    await expect(first.checkReady()).resolves.toBeUndefined();
    await expect(second.checkReady()).resolves.toBeUndefined();
    await Promise.all([first.close(), second.close()]);

    const raw = new DatabaseSync(file);
    raw.exec(`PRAGMA user_version = ${sqliteMigrations.at(-1)!.version + 1}`);
    raw.close();
    await expect(openSqliteDatabase({ file })).rejects.toThrow(
      new RegExp(`Cannot open the SQLite database ${file}: .*newer than this release's`),
    );
  });

  it('gives conversations stored before the byte totals (schema 17) their totals, and the triggers keep them after', async () => {
    const file = join(directory(), 'deskpilot.sqlite');
    const raw = new DatabaseSync(file);
    for (const migration of sqliteMigrations.filter((each) => each.version < 17)) raw.exec(migration.sql);
    raw.exec('PRAGMA user_version = 16');
    const insertSession = raw.prepare(
      `INSERT INTO deskpilot_chat_sessions (id, user_email, project_key, working_memory, created_at, updated_at, version)
       VALUES (?, ?, 'acme-b2c', '{}', 1, 1, 1)`,
    );
    insertSession.run('c-1', 'rep@example.com');
    insertSession.run('c-2', 'rep@example.com');
    insertSession.run('c-3', 'other@example.com');
    const insertMessage = raw.prepare(
      `INSERT INTO deskpilot_chat_messages (session_id, id, message, bytes, preview) VALUES (?, ?, '{}', ?, '')`,
    );
    insertMessage.run('c-1', 'a', 10);
    insertMessage.run('c-1', 'b', 200);
    insertMessage.run('c-2', 'c', 3_000);
    insertMessage.run('c-3', 'd', 7);
    raw.close();

    const database = await openSqliteDatabase({ file });
    onTestFinished(() => database.close());
    const { chatStore } = createSqliteStores(database);
    const totals = async () => ({
      conversations: await Promise.all(['c-1', 'c-2', 'c-3'].map((sessionId) => chatStore.storedBytes!({ sessionId }))),
      users: await Promise.all(
        ['rep@example.com', 'other@example.com'].map((userEmail) => chatStore.storedBytes!({ userEmail })),
      ),
    });
    expect(await totals()).toEqual({ conversations: [210, 3_000, 7], users: [3_210, 7] });
    // A conversation row deleted outright (not a tombstone) takes its messages' sizes off its user's.
    database.run(() => database.statement('DELETE FROM deskpilot_chat_sessions WHERE id = ?').run('c-1'));
    expect(await totals()).toEqual({ conversations: [0, 3_000, 7], users: [3_000, 7] });
  });

  it("applies a module's migrations once, after the core's, records them by module, and checks them when ready", async () => {
    const file = join(directory(), 'deskpilot.sqlite');
    const v1 = { version: 1, name: 'notes', sql: 'CREATE TABLE deskpilot_notes (id TEXT PRIMARY KEY) STRICT;' };
    const v2 = { version: 2, name: 'note bodies', sql: 'ALTER TABLE deskpilot_notes ADD COLUMN body TEXT;' };
    const notes = { module: 'notes', migrations: [v1] };
    // Two openers at once: one applies them, the other finds them applied.
    const both = await Promise.all([
      openSqliteDatabase({ file, modules: [notes] }),
      openSqliteDatabase({ file, modules: [notes] }),
    ]);
    await Promise.all(both.map((database) => database.close()));
    const later = { module: 'notes', migrations: [v1, v2] };
    const database = await openSqliteDatabase({ file, modules: [later] });
    onTestFinished(() => database.close());
    await expect(database.checkReady()).resolves.toBeUndefined();
    database.run(() => database.statement("INSERT INTO deskpilot_notes (id, body) VALUES ('a', 'b')").run());
    expect(
      database.run(() =>
        database.statement('SELECT module, version, name FROM deskpilot_module_migrations ORDER BY version').all(),
      ),
    ).toEqual([
      { module: 'notes', version: 1, name: 'notes' },
      { module: 'notes', version: 2, name: 'note bodies' },
    ]);
    // An older opener of the same file is ready (the module's migrations are additive); a newer one's
    // readiness, before it migrates, is not.
    const older = await openSqliteDatabase({ file, modules: [notes] });
    await expect(older.checkReady()).resolves.toBeUndefined();
    await older.close();
    const raw = new DatabaseSync(file);
    raw.exec('DELETE FROM deskpilot_module_migrations WHERE version = 2');
    raw.close();
    await expect(database.checkReady()).rejects.toMatchObject({
      code: 'store_unavailable',
      detail: 'The schema of the module notes is at version 1, this release needs 2.',
    });
  });

  it("rolls a failing module migration back with the core's, and refuses a schema not spelled as one", async () => {
    const file = join(directory(), 'deskpilot.sqlite');
    const failing = { module: 'notes', migrations: [{ version: 1, name: 'broken', sql: 'CREATE TABLE (' }] };
    await expect(openSqliteDatabase({ file, modules: [failing] })).rejects.toThrow(/Cannot open the SQLite database/);
    const raw = new DatabaseSync(file);
    expect(raw.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get()).toEqual({ n: 0 });
    raw.close();
    for (const modules of [
      [{ module: 'Notes', migrations: [] }],
      [
        { module: 'notes', migrations: [] },
        { module: 'notes', migrations: [] },
      ],
      [{ module: 'notes', migrations: [{ version: 0, name: 'zero', sql: '' }] }],
    ])
      await expect(openSqliteDatabase({ file, modules })).rejects.toThrow(TypeError);
  });

  it('says which file cannot be opened, and why', async () => {
    const blocker = join(directory(), 'a-file');
    writeFileSync(blocker, '');
    await expect(openSqliteDatabase({ file: join(blocker, 'deskpilot.sqlite') })).rejects.toThrow(
      `The data directory ${blocker} cannot be written: EEXIST: file already exists, mkdir '${blocker}'.`,
    );
    const notADatabase = join(directory(), 'notes.txt');
    writeFileSync(notADatabase, 'plain text, not a database '.repeat(100));
    await expect(openSqliteDatabase({ file: notADatabase })).rejects.toThrow(/file is not a database/);
  });

  it('answers a corrupted row and a closed database with store_unavailable, not a crash', async () => {
    const file = join(directory(), 'deskpilot.sqlite');
    const database = await openSqliteDatabase({ file });
    const stores = createSqliteStores(database);
    await stores.chatStore.getOrCreateSession({
      id: 'chat-1',
      userEmail: 'rep@example.com',
      projectKey: 'acme-b2c',
      createdAt: 1,
      updatedAt: 1,
    });
    const raw = new DatabaseSync(file);
    raw.exec(`UPDATE deskpilot_chat_sessions SET working_memory = 'not json'`);
    raw.exec(
      `INSERT INTO deskpilot_sessions VALUES ('big', 'h', 'u', 'p', 'c', 1, 9007199254740993, 1, 1, NULL, NULL)`,
    );
    raw.close();
    for (const read of [stores.chatStore.getSession('chat-1'), stores.sessionStore.get('big')]) {
      const error = await read.catch((caught: unknown) => caught);
      expect(isDeskpilotError(error) && error.code).toBe('store_unavailable');
    }
    await database.close();
    await database.close(); // twice is harmless
    const closed = await stores.sessionStore.get('anything').catch((caught: unknown) => caught);
    expect(isDeskpilotError(closed) && closed.code).toBe('store_unavailable');
    await expect(database.checkReady()).rejects.toMatchObject({ code: 'store_unavailable' });
  });
});
