// Fault suite, start-up: what an operator sees when Redis, the data directory or the disk is not
// usable, and that one embedded database is never opened by two processes.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

  it('refuses a second process on the same data directory (exit code 2, naming the directory and the holder), and loses no turn', async () => {
    const dataDir = await seededDataDir(['chat']);
    const first = await spawnExample(serverFile, { DATA_DIR: dataDir });
    const turns = await confirmedTurns(first.url, 5);
    expect(turns).toHaveLength(5);

    const second = await runToExit(serverFile, failingEnv({ DATA_DIR: dataDir }));
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(
      `The data directory ${join(dataDir, 'chat')} is in use by process ${first.child.pid} on `,
    );
    expect(second.stderr).toContain('Stop that process, or give this one its own directory');

    // The holder dies without a word; its lock is stale, and the next start takes it over.
    first.child.kill('SIGKILL');
    await exitCode(first.child);
    const restarted = await spawnExample(serverFile, { DATA_DIR: dataDir });
    expect(await countLost(restarted.url, turns)).toEqual({ lost: 0, reasons: [] });
  });

  it('keeps the session and chat services apart under one DATA_DIR, so both restart after a SIGKILL with nothing lost', async () => {
    const dataDir = await seededDataDir();
    const start = () =>
      Promise.all([
        spawnExample(sessionServerFile, { DATA_DIR: dataDir, COOKIE_SECURE: 'false' }),
        spawnExample(serverFile, { DATA_DIR: dataDir }),
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
    await expect.poll(sessionAgain.output).toContain(`PGlite in ${join(dataDir, 'session')}`);
    await expect.poll(chatAgain.output).toContain(`PGlite in ${join(dataDir, 'chat')}`);
    expect((await fetch(`${sessionAgain.url}/sessions/current`, { headers: { cookie } })).status).toBe(200);
    expect(await countLost(chatAgain.url, turns)).toEqual({ lost: 0, reasons: [] });
  }, 60_000);
});

describe.skipIf(smallDiskUnavailable)(
  `chat server on a bad disk${smallDiskUnavailable ? ` (SKIPPED: ${smallDiskUnavailable})` : ''}`,
  () => {
    it('refuses a read-only data directory with a readable message, new or existing', async () => {
      const disk = smallDisk(64 * 1024 * 1024);
      await seedEmbeddedDatabases(join(disk.path, 'existing'), ['chat']);
      disk.readOnly();
      for (const root of ['existing', 'new']) {
        const { code, stderr } = await runToExit(serverFile, failingEnv({ DATA_DIR: join(disk.path, root) }));
        expect(code).toBe(1);
        expect(stderr).toContain(
          `[chat-server] cannot start: The data directory ${join(disk.path, root, 'chat')} cannot be written: read-only file system (EROFS).`,
        );
        expect(stderr).not.toContain('[object Object]');
      }
    });

    it('refuses a full data directory with a readable message, new or existing', async () => {
      const disk = smallDisk(64 * 1024 * 1024);
      await seedEmbeddedDatabases(join(disk.path, 'existing'), ['chat']);
      disk.fill();
      for (const root of ['existing', 'new']) {
        const { code, stderr } = await runToExit(serverFile, failingEnv({ DATA_DIR: join(disk.path, root) }));
        expect(code).toBe(1);
        expect(stderr).toContain(
          `[chat-server] cannot start: The data directory ${join(disk.path, root, 'chat')} cannot be written: no space left on device (ENOSPC).`,
        );
        expect(stderr).not.toContain('[object Object]');
      }
    });

    it('refuses a disk too small for a new database with a readable message', async () => {
      // Room for the write probe, not for the database files.
      const disk = smallDisk(4 * 1024 * 1024);
      const { code, stderr } = await runToExit(serverFile, failingEnv({ DATA_DIR: disk.path }));
      expect(code).toBe(1);
      expect(stderr).toContain(
        `[chat-server] cannot start: Cannot open the embedded database in ${join(disk.path, 'chat')}: no space left on device (ENOSPC).`,
      );
      expect(stderr).not.toContain('[object Object]');
    });
  },
);
