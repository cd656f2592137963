import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { DataDirectoryLockedError, lockDataDirectory, lockFileName, processStat } from './lock-data-directory.js';

function directory(): string {
  const path = mkdtempSync(join(tmpdir(), 'deskpilot-lock-'));
  onTestFinished(() => rmSync(path, { recursive: true, force: true }));
  return path;
}

/** A live process that is not this one (it takes no lock itself: the test writes one in its name). */
async function otherProcess() {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  onTestFinished(() => void child.kill('SIGKILL'));
  await once(child, 'spawn');
  return child;
}

const lockOf = (pid: number, host = hostname()) =>
  JSON.stringify({ pid, host, command: 'node other-server.js', since: '2025-01-02T03:04:05.000Z' });

describe('lockDataDirectory', () => {
  it('writes a lock naming this process, refuses a second handle, and is free again once released', async () => {
    const path = directory();
    const lock = await lockDataDirectory(path);
    const holder = JSON.parse(readFileSync(join(path, lockFileName), 'utf8'));
    expect(holder).toMatchObject({ pid: process.pid, host: hostname() });
    expect(holder.command).toContain(process.argv[1]);
    expect(Date.parse(holder.since)).not.toBeNaN();

    const second = await lockDataDirectory(path).catch((error: unknown) => error);
    expect(second).toBeInstanceOf(DataDirectoryLockedError);
    expect((second as Error).message).toContain(path);

    await lock.release();
    await lock.release(); // twice is harmless
    expect(existsSync(join(path, lockFileName))).toBe(false);
    await (await lockDataDirectory(path)).release();
  });

  it('refuses a directory held by another live process, naming the directory, the holder and what to do', async () => {
    const path = directory();
    const child = await otherProcess();
    writeFileSync(join(path, lockFileName), lockOf(child.pid!));
    const error = (await lockDataDirectory(path).catch((caught: unknown) => caught)) as DataDirectoryLockedError;
    expect(error).toBeInstanceOf(DataDirectoryLockedError);
    expect(error.holder?.pid).toBe(child.pid);
    expect(error.message).toContain(path);
    expect(error.message).toContain(
      `process ${child.pid} on ${hostname()} (node other-server.js), since 2025-01-02T03:04:05.000Z`,
    );
    expect(error.message).toMatch(/Stop that process, or give this one its own directory/);
    // Refused without touching the holder's lock.
    expect(readFileSync(join(path, lockFileName), 'utf8')).toBe(lockOf(child.pid!));
  });

  it('takes over the lock of a process of this host that is gone', async () => {
    const path = directory();
    const child = await otherProcess();
    writeFileSync(join(path, lockFileName), lockOf(child.pid!));
    child.kill('SIGKILL');
    await once(child, 'exit');
    const lock = await lockDataDirectory(path);
    expect(JSON.parse(readFileSync(join(path, lockFileName), 'utf8')).pid).toBe(process.pid);
    await lock.release();
  });

  it.runIf(process.platform === 'linux')(
    'takes over the lock of a killed process that is still a zombie (not yet reaped)',
    async () => {
      const path = directory();
      // The shell starts a child, prints its pid and becomes a `sleep` that never reaps it: once killed,
      // the child stays a zombie as long as the parent lives (kill(pid, 0) still succeeds on it).
      const parent = spawn('sh', ['-c', 'sleep 60 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
      onTestFinished(() => void parent.kill('SIGKILL'));
      const [line] = (await once(parent.stdout, 'data')) as [Buffer];
      const pid = Number(line.toString().trim());
      writeFileSync(
        join(path, lockFileName),
        JSON.stringify({ ...JSON.parse(lockOf(pid)), started: processStat(pid)!.started }),
      );
      // Killed while the parent is still the shell, the child would be reaped at once: wait for the `exec`.
      await expect.poll(() => readFileSync(`/proc/${parent.pid}/comm`, 'utf8').trim()).toBe('sleep');
      process.kill(pid, 'SIGKILL');
      await expect.poll(() => processStat(pid)?.state).toBe('Z');
      expect(() => process.kill(pid, 0)).not.toThrow();
      const lock = await lockDataDirectory(path);
      expect(JSON.parse(readFileSync(join(path, lockFileName), 'utf8')).pid).toBe(process.pid);
      await lock.release();
    },
  );

  it.runIf(process.platform === 'linux')(
    'records its start time, and takes over a lock whose pid is now another process (another start time)',
    async () => {
      const path = directory();
      const held = await lockDataDirectory(path);
      expect(JSON.parse(readFileSync(join(path, lockFileName), 'utf8')).started).toBe(processStat('self')!.started);
      await held.release();

      const child = await otherProcess();
      const started = processStat(child.pid!)!.started;
      // The holder's own start time: a live holder, refused.
      writeFileSync(join(path, lockFileName), JSON.stringify({ ...JSON.parse(lockOf(child.pid!)), started }));
      await expect(lockDataDirectory(path)).rejects.toBeInstanceOf(DataDirectoryLockedError);
      // Another start time: the pid was reused after the holder died.
      writeFileSync(
        join(path, lockFileName),
        JSON.stringify({ ...JSON.parse(lockOf(child.pid!)), started: String(Number(started) - 1) }),
      );
      const lock = await lockDataDirectory(path);
      expect(JSON.parse(readFileSync(join(path, lockFileName), 'utf8')).pid).toBe(process.pid);
      await lock.release();
    },
  );

  it('takes over a lock naming this pid that this process does not hold (a restarted container keeps its pid)', async () => {
    const path = directory();
    writeFileSync(join(path, lockFileName), lockOf(process.pid));
    const lock = await lockDataDirectory(path);
    expect(JSON.parse(readFileSync(join(path, lockFileName), 'utf8')).command).not.toBe('node other-server.js');
    await lock.release();
  });

  it('never takes over a lock of another host, nor a file it cannot read, and says which file to delete', async () => {
    const path = directory();
    writeFileSync(join(path, lockFileName), lockOf(1, 'other-host.example'));
    const foreign = (await lockDataDirectory(path).catch((caught: unknown) => caught)) as DataDirectoryLockedError;
    expect(foreign).toBeInstanceOf(DataDirectoryLockedError);
    expect(foreign.message).toContain(
      `If no process on other-host.example uses it any more, delete ${join(path, lockFileName)}`,
    );

    writeFileSync(join(path, lockFileName), 'garbage');
    const unreadable = (await lockDataDirectory(path).catch((caught: unknown) => caught)) as DataDirectoryLockedError;
    expect(unreadable).toBeInstanceOf(DataDirectoryLockedError);
    expect(unreadable.holder).toBeNull();
    expect(unreadable.message).toContain(`delete ${join(path, lockFileName)}`);
  });

  it('refuses a second handle in this process at once, even while the first is still being taken', async () => {
    const path = directory();
    const outcomes = await Promise.allSettled([
      lockDataDirectory(path),
      lockDataDirectory(path),
      lockDataDirectory(path),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    await (outcomes[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof lockDataDirectory>>>).value.release();
  });

  it('lets exactly one of several processes racing for a stale lock have it', async () => {
    const path = directory();
    const child = await otherProcess();
    writeFileSync(join(path, lockFileName), lockOf(child.pid!));
    child.kill('SIGKILL');
    await once(child, 'exit');
    // Each racer reports, then holds the lock (if it got it) until its stdin closes.
    const script = `
      const { lockDataDirectory } = await import(${JSON.stringify(fileURLToPath(new URL('./lock-data-directory.ts', import.meta.url)))});
      try { await lockDataDirectory(${JSON.stringify(path)}); console.log('held'); }
      catch (error) { console.log(error.name); }
      process.stdin.resume();`;
    const racers = Array.from({ length: 4 }, () => {
      const racer = spawn(process.execPath, ['--input-type=module', '-e', script], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      onTestFinished(() => void racer.kill('SIGKILL'));
      return racer;
    });
    const answers = await Promise.all(
      racers.map(async (racer) => String((await once(racer.stdout!, 'data'))[0]).trim()),
    );
    expect(answers.filter((answer) => answer === 'held')).toHaveLength(1);
    expect(answers.filter((answer) => answer === 'DataDirectoryLockedError')).toHaveLength(3);
  }, 30_000); // four Node processes starting on a busy machine
});
