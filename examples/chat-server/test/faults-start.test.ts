// Fault suite, start-up: what an operator sees when Redis, the data directory or the disk is not
// usable; that a PGlite directory is never opened by two processes, and that the SQLite file is
// shared safely by the two services (and by a second chat process).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteDatabase } from '@deskpilot/sqlite';
import { describe, expect, it } from 'vitest';
import { countLost, isConfirmed, postJson, readChunks, turnBody } from '../../test-support/chat-client.ts';
import { seedEmbeddedDatabases } from '../../test-support/pglite-template.ts';
import {
  exitCode,
  runToExit,
  seededDataDir,
  spawnExample,
  temporaryDataDir,
} from '../../test-support/spawn-example.ts';
import { closedPort } from '../../test-support/tcp-proxy.ts';
import { smallDisk, smallDiskUnavailable } from '../../test-support/tmpfs.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const sessionServerFile = fileURLToPath(new URL('../../session-server/src/server.ts', import.meta.url));

/** Environment of a server that must fail to start: embedded database, no Redis unless given. */
const failingEnv = (env: Record<string, string>) => ({ PORT: '0', DATABASE_URL: '', REDIS_URL: '', ...env });

/** Runs `count` single-turn conversations to their end; returns the confirmed ones. */
async function confirmedTurns(url: string, count: number) {
  const turns = Array.from({ length: count }, (_, index) => turnBody(`show order ORD-100${index % 3}`));
  const confirmed = [];
  for (const turn of turns) if (isConfirmed(await readChunks(await postJson(url, '/chat', turn)))) confirmed.push(turn);
  return confirmed;
}

describe('chat server start-up faults', () => {
  it('stops with a clear message and exit code 1 when Redis is unreachable, instead of retrying for ever', async () => {
    const port = await closedPort();
    const { code, stderr } = await runToExit(
      serverFile,
      failingEnv({ DATA_DIR: temporaryDataDir(), REDIS_URL: `redis://:hunter2@127.0.0.1:${port}` }),
    );
    expect(code).toBe(1);
    expect(stderr).toContain(`[chat-server] cannot start: Cannot connect to Redis at redis://:***@127.0.0.1:${port}`);
    expect(stderr).toContain('ECONNREFUSED');
    expect(stderr).not.toContain('hunter2');
  });

  it('refuses SHARED_SESSIONS on PGlite, whose directory one service owns, before it opens anything', async () => {
    const { code, stderr } = await runToExit(
      serverFile,
      failingEnv({ DATA_DIR: temporaryDataDir(), EMBEDDED_DATABASE: 'pglite', SHARED_SESSIONS: 'true' }),
    );
    expect(code).toBe(1);
    expect(stderr).toContain('[chat-server] cannot start: SHARED_SESSIONS: a PGlite directory belongs to one service');
  });

  it('on PGlite, refuses a second process on the same data directory (exit code 2, naming the directory and the holder), and loses no turn', async () => {
    const env = { EMBEDDED_DATABASE: 'pglite' };
    const dataDir = await seededDataDir(['chat']);
    const first = await spawnExample(serverFile, { ...env, DATA_DIR: dataDir });
    const turns = await confirmedTurns(first.url, 5);
    expect(turns).toHaveLength(5);

    const second = await runToExit(serverFile, failingEnv({ ...env, DATA_DIR: dataDir }));
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(
      `The data directory ${join(dataDir, 'chat')} is in use by process ${first.child.pid} on `,
    );
    expect(second.stderr).toContain('Stop that process, or give this one its own directory');

    // The holder dies without a word; its lock is stale, and the next start takes it over.
    first.child.kill('SIGKILL');
    await exitCode(first.child);
    const restarted = await spawnExample(serverFile, { ...env, DATA_DIR: dataDir });
    expect(await countLost(restarted.url, turns)).toEqual({ lost: 0, reasons: [] });
  });

  it('on SQLite, lets a second process share the data directory: both serve, and a SIGKILL of either loses no turn', async () => {
    const dataDir = temporaryDataDir();
    const [first, second] = [
      await spawnExample(serverFile, { DATA_DIR: dataDir }),
      await spawnExample(serverFile, { DATA_DIR: dataDir }),
    ];
    const turns = [...(await confirmedTurns(first.url, 3)), ...(await confirmedTurns(second.url, 3))];
    expect(turns).toHaveLength(6);
    first.child.kill('SIGKILL');
    await exitCode(first.child);
    expect(await countLost(second.url, turns)).toEqual({ lost: 0, reasons: [] });
  });

  for (const [database, storageLines] of [
    ['sqlite', (dataDir: string) => [`SQLite in ${join(dataDir, 'deskpilot.sqlite')}`]],
    ['pglite', (dataDir: string) => [`PGlite in ${join(dataDir, 'session')}`, `PGlite in ${join(dataDir, 'chat')}`]],
  ] as const) {
    it(`keeps both services' data under one DATA_DIR on ${database}, so both restart after a SIGKILL with nothing lost`, async () => {
      const env = { EMBEDDED_DATABASE: database };
      const dataDir = database === 'pglite' ? await seededDataDir() : temporaryDataDir();
      const start = () =>
        Promise.all([
          spawnExample(sessionServerFile, { ...env, DATA_DIR: dataDir, COOKIE_SECURE: 'false' }),
          spawnExample(serverFile, { ...env, DATA_DIR: dataDir }),
        ]);
      const [session, chat] = await start();
      const login = await postJson(session.url, '/sessions', {
        email: 'alice@example.com',
        password: 'alice-demo-password',
      });
      expect(login.status).toBe(201);
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const turns = await confirmedTurns(chat.url, 5);
      expect(turns).toHaveLength(5);

      for (const server of [session, chat]) server.child.kill('SIGKILL');
      await Promise.all([exitCode(session.child), exitCode(chat.child)]);
      const [sessionAgain, chatAgain] = await start();
      const [sessionLine, chatLine = sessionLine] = storageLines(dataDir);
      await expect.poll(sessionAgain.output).toContain(sessionLine);
      await expect.poll(chatAgain.output).toContain(chatLine);
      expect((await fetch(`${sessionAgain.url}/sessions/current`, { headers: { cookie } })).status).toBe(200);
      expect(await countLost(chatAgain.url, turns)).toEqual({ lost: 0, reasons: [] });
    }, 60_000);
  }
});

/** A database of `kind` already created in `root`, as a previous start leaves it. */
async function existingDatabase(kind: 'sqlite' | 'pglite', root: string): Promise<void> {
  if (kind === 'pglite') return seedEmbeddedDatabases(root, ['chat']);
  await (await openSqliteDatabase({ file: join(root, 'deskpilot.sqlite') })).close();
}

describe.skipIf(smallDiskUnavailable)(
  `chat server on a bad disk${smallDiskUnavailable ? ` (SKIPPED: ${smallDiskUnavailable})` : ''}`,
  () => {
    // The folder the embedded database writes in: the data root for SQLite's file, a folder per service for PGlite.
    const folders = { sqlite: (root: string) => root, pglite: (root: string) => join(root, 'chat') };
    for (const kind of ['sqlite', 'pglite'] as const) {
      it(`refuses a read-only data directory with a readable message, new or existing (${kind})`, async () => {
        const disk = smallDisk(64 * 1024 * 1024);
        await existingDatabase(kind, join(disk.path, 'existing'));
        disk.readOnly();
        for (const root of ['existing', 'new']) {
          const { code, stderr } = await runToExit(
            serverFile,
            failingEnv({ EMBEDDED_DATABASE: kind, DATA_DIR: join(disk.path, root) }),
          );
          expect(code).toBe(1);
          expect(stderr).toContain(
            `[chat-server] cannot start: The data directory ${folders[kind](join(disk.path, root))} cannot be written: read-only file system (EROFS).`,
          );
          expect(stderr).not.toContain('[object Object]');
        }
      });

      it(`refuses a full data directory with a readable message, new or existing (${kind})`, async () => {
        const disk = smallDisk(64 * 1024 * 1024);
        await existingDatabase(kind, join(disk.path, 'existing'));
        disk.fill();
        for (const root of ['existing', 'new']) {
          const { code, stderr } = await runToExit(
            serverFile,
            failingEnv({ EMBEDDED_DATABASE: kind, DATA_DIR: join(disk.path, root) }),
          );
          expect(code).toBe(1);
          expect(stderr).toContain(
            `[chat-server] cannot start: The data directory ${folders[kind](join(disk.path, root))} cannot be written: no space left on device (ENOSPC).`,
          );
          expect(stderr).not.toContain('[object Object]');
        }
      });
    }

    it('refuses a disk too small for a new PGlite database with a readable message', async () => {
      // Room for the write probe, not for the database files (SQLite's new file takes a few hundred KiB: it starts).
      const disk = smallDisk(4 * 1024 * 1024);
      const { code, stderr } = await runToExit(
        serverFile,
        failingEnv({ EMBEDDED_DATABASE: 'pglite', DATA_DIR: disk.path }),
      );
      expect(code).toBe(1);
      expect(stderr).toContain(
        `[chat-server] cannot start: Cannot open the embedded database in ${join(disk.path, 'chat')}: no space left on device (ENOSPC).`,
      );
      expect(stderr).not.toContain('[object Object]');
    });
  },
);
