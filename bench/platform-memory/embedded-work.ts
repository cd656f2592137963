// The child of embedded-options.ts: opens one embedded database the way the reference servers do and
// does the same work on it; prints `done <ms>` and waits to be measured and killed.
// Usage: node embedded-work.ts <memory|sqlite|pglite> <directory>  (PRELOAD_TARBALL: `dump:<file>` writes
// a pre-initialised PGlite directory there; `<file>` starts from one)
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMemorySessionStore, createMemoryUserDirectory } from '@deskpilot/core';
import { createMemoryApprovalStore, createMemoryChatStore } from '@deskpilot/core/chat';
import { demoUsers } from '@deskpilot/core/demo';
import { createSqliteStores, openSqliteDatabase } from '@deskpilot/sqlite';

const [store, directory] = process.argv.slice(2) as ['memory' | 'sqlite' | 'pglite', string];
const preload = process.env.PRELOAD_TARBALL ?? '';
const started = performance.now();

// A precomputed hash (N=2^10): the seeding measures the database, not scrypt.
const passwordHash = '$scrypt$ln=10,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';

async function open() {
  if (store === 'memory') {
    return {
      sessionStore: createMemorySessionStore(),
      userDirectory: createMemoryUserDirectory(),
      chatStore: createMemoryChatStore(),
      approvalStore: createMemoryApprovalStore(),
      close: async () => {},
    };
  }
  if (store === 'sqlite') {
    const database = await openSqliteDatabase({ file: join(directory, 'deskpilot.sqlite') });
    return { ...createSqliteStores(database), close: () => database.close() };
  }
  const { openDatabase, createPostgresStores } = await import('@deskpilot/postgres');
  if (preload && !preload.startsWith('dump:')) {
    // Where a release would ship an initialised directory: PGlite loads it instead of running initdb.
    const { PGlite } = await import('@electric-sql/pglite');
    const db = await PGlite.create({ dataDir: directory, loadDataDir: new Blob([await readFile(preload)]) });
    await db.close();
  }
  const database = await openDatabase({ dataDir: directory });
  if (preload.startsWith('dump:')) {
    const { PGlite } = await import('@electric-sql/pglite');
    await database.close();
    const db = await PGlite.create({ dataDir: directory });
    const dump = await db.dumpDataDir('gzip');
    await writeFile(preload.slice(5), Buffer.from(await dump.arrayBuffer()));
    await db.close();
    return undefined;
  }
  return { ...createPostgresStores(database.client, { cache: true }), close: () => database.close() };
}

const stores = await open();
if (stores) {
  for (const { password: _password, ...user } of demoUsers)
    await stores.userDirectory.addUser({ ...user, passwordHash });
  const now = Date.now();
  for (let index = 0; index < 200; index++) {
    const id = `session-${now}-${index}`;
    await stores.sessionStore.create({
      id,
      secretHash: 'x'.repeat(43),
      userId: 'usr_alice',
      projectKey: 'acme-b2c',
      clientId: 'acme',
      createdAt: now,
      expiresAt: now + 3_600_000,
      idleExpiresAt: now + 600_000,
      version: 1,
    });
    await stores.sessionStore.get(id);
  }
  for (let turn = 0; turn < 20; turn++) {
    const init = {
      id: `chat-${turn % 4}`,
      userEmail: 'alice@example.com',
      projectKey: 'acme-b2c',
      createdAt: now,
      updatedAt: now,
    };
    const user = {
      id: `u-${turn}`,
      role: 'user' as const,
      parts: [{ type: 'text' as const, text: 'Where is ORD-1001?' }],
    };
    await stores.chatStore.openSession!(init, user);
    const answer = {
      id: `a-${turn}`,
      role: 'assistant' as const,
      parts: [{ type: 'text' as const, text: 'It shipped.' }],
    };
    await stores.chatStore.saveTurn!(init.id, answer, { lastTurnStatus: 'complete', updatedAt: now });
  }
}
console.log(`done ${Math.round(performance.now() - started)}`);
setInterval(() => {}, 60_000);
