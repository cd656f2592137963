import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';

/** Who holds a data directory, as its lock file says. */
export interface DataDirectoryHolder {
  pid: number;
  host: string;
  /** The command line of the holding process. */
  command: string;
  /** ISO 8601 time the lock was taken. */
  since: string;
  /**
   * When the holding process started, as its kernel counts (Linux: `/proc/<pid>/stat`'s start time, in
   * clock ticks since boot): a later process that reuses the pid has another. Absent elsewhere.
   */
  started?: string;
}

/** A held data directory lock; `release()` removes the lock file if it is still this holder's. */
export interface DataDirectoryLock {
  /** The lock file's path. */
  file: string;
  holder: DataDirectoryHolder;
  release(): Promise<void>;
}

/** Thrown when another live process (or this one, through another handle) holds the data directory. */
export class DataDirectoryLockedError extends Error {
  override name = 'DataDirectoryLockedError';
  /** The locked directory. */
  readonly directory: string;
  /** The lock file's path. */
  readonly file: string;
  /** The holder named in the lock file, or null when the file cannot be read as a lock. */
  readonly holder: DataDirectoryHolder | null;

  constructor(directory: string, file: string, holder: DataDirectoryHolder | null, sameProcess = false) {
    const who = holder
      ? `process ${holder.pid} on ${holder.host} (${holder.command}), since ${holder.since}`
      : 'an unreadable lock file';
    const advice = sameProcess
      ? 'Close the other database handle first.'
      : holder && holder.host !== hostname()
        ? `Stop that process, or give this one its own directory. If no process on ${holder.host} uses it any more, delete ${file}.`
        : `Stop that process, or give this one its own directory.${holder ? '' : ` If no process uses it, delete ${file}.`}`;
    super(
      `The data directory ${directory} is in use by ${sameProcess ? 'this process' : who}. One process per embedded database: ${advice}`,
    );
    this.directory = directory;
    this.file = file;
    this.holder = holder;
  }
}

/** The lock file's name inside a data directory. */
export const lockFileName = 'deskpilot.lock';

// Directories this process holds: a second handle in the same process corrupts the files as surely as
// a second process, and its pid alone cannot tell it from a predecessor that had the same pid.
const heldHere = new Set<string>();

function readHolder(text: string): DataDirectoryHolder | null {
  try {
    const value = JSON.parse(text) as Partial<DataDirectoryHolder>;
    const fields =
      Number.isInteger(value.pid) &&
      typeof value.host === 'string' &&
      typeof value.command === 'string' &&
      typeof value.since === 'string';
    if (fields && (value.started === undefined || typeof value.started === 'string')) {
      return value as DataDirectoryHolder;
    }
  } catch {
    // Not a lock this code wrote: treated as held, never taken over.
  }
  return null;
}

/** A process as Linux's `/proc/<pid>/stat` shows it: its state letter and start time; undefined where there is no such file. */
export function processStat(pid: number | 'self'): { state: string; started: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces or parentheses itself: the
  // fields are counted from the last ')'. Field 3 is the state, field 22 the start time.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [state, started] = [fields[0], fields[19]];
  return state && started ? { state, started } : undefined;
}

/**
 * True when `pid` on this host is the holder's live process (one owned by another user counts). A
 * killed process stays a zombie until its parent reaps it — it will never run again — and a pid the
 * kernel handed to a later process has another start time: neither holds the lock.
 */
function isAlive(holder: DataDirectoryHolder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = processStat(holder.pid);
  if (!stat) return true;
  if (stat.state === 'Z' || stat.state === 'X') return false;
  return holder.started === undefined || holder.started === stat.started;
}

/** A holder that can never come back: a process of this host that is gone, or this pid before a restart. */
function isStale(holder: DataDirectoryHolder): boolean {
  if (holder.host !== hostname()) return false;
  // Our own pid in a lock we do not hold: a predecessor with the same pid (pid 1 in a container).
  return holder.pid === process.pid || !isAlive(holder);
}

const isCode = (error: unknown, code: string) => (error as NodeJS.ErrnoException | undefined)?.code === code;

/** Creates `file` with `text` atomically, or fails with EEXIST: a reader never sees a half-written lock. */
async function createExclusive(file: string, text: string): Promise<void> {
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, text, { flush: true });
  try {
    await link(temporary, file);
  } finally {
    await unlink(temporary).catch(() => {});
  }
}

const readIfExists = (file: string) =>
  readFile(file, 'utf8').catch((error: unknown) => (isCode(error, 'ENOENT') ? undefined : Promise.reject(error)));

/**
 * Writes the lock file, taking over a stale one; throws {@link DataDirectoryLockedError} when it is held.
 *
 * A stale lock is removed only by the holder of a claim on that very lock: a file named after a digest of
 * its content, taken the same way (exclusively, and over from a claimant that died mid-takeover). A
 * process that moved or removed the lock without the claim could take away a fresh lock another racer
 * had just written in its place, and two processes would hold the directory.
 */
async function acquire(path: string, file: string, text: string, depth = 0): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await createExclusive(file, text);
      return;
    } catch (error) {
      if (!isCode(error, 'EEXIST')) throw error;
    }
    const found = await readIfExists(file);
    if (found === undefined) continue; // released meanwhile
    const current = readHolder(found);
    if (!current || !isStale(current) || attempt >= 3 || depth >= 2) {
      throw new DataDirectoryLockedError(path, file, current);
    }
    const claim = `${file}.${createHash('sha256').update(found).digest('hex').slice(0, 16)}.claim`;
    try {
      await acquire(path, claim, text, depth + 1);
    } catch (error) {
      // Another live process is taking this stale lock over: the directory is its.
      if (error instanceof DataDirectoryLockedError) throw new DataDirectoryLockedError(path, file, current);
      throw error;
    }
    try {
      // Only a claimant removes this content, and its holder is gone: it cannot change under us.
      if ((await readIfExists(file)) === found) await unlink(file).catch(() => {});
    } finally {
      if ((await readIfExists(claim)) === text) await unlink(claim).catch(() => {});
    }
  }
}

/**
 * Takes the lock of a data directory (`deskpilot.lock` inside it): one process per embedded database.
 * The file names its holder (pid, host, command line, since when, and on Linux the process's start
 * time). A lock left by a process of this host that is gone — exited, a zombie not yet reaped, or its
 * pid now another process's — is taken over; one held by a live process, by another host, or by another handle
 * in this process throws {@link DataDirectoryLockedError}. Writing the file is also the directory's
 * first write: a read-only directory fails here.
 *
 * @example
 * const lock = await lockDataDirectory('./.data/chat');
 * const db = await PGlite.create('./.data/chat');
 * process.once('SIGTERM', async () => { await db.close(); await lock.release(); });
 */
export async function lockDataDirectory(directory: string): Promise<DataDirectoryLock> {
  const path = resolve(directory);
  const file = join(path, lockFileName);
  const started = processStat('self')?.started;
  const holder: DataDirectoryHolder = {
    pid: process.pid,
    host: hostname(),
    command: process.argv.join(' ').slice(0, 500),
    since: new Date().toISOString(),
    ...(started === undefined ? {} : { started }),
  };
  const text = `${JSON.stringify(holder)}\n`;
  if (heldHere.has(path)) throw new DataDirectoryLockedError(path, file, null, true);
  // Reserved before the first await: a concurrent call in this process would read our own pid in the
  // lock and take it for a predecessor's.
  heldHere.add(path);
  try {
    await acquire(path, file, text);
  } catch (error) {
    heldHere.delete(path);
    throw error;
  }
  // A process that exits without closing (process.exit, an uncaught error) leaves no lock behind; a
  // killed one leaves a stale lock that the next start on this host takes over.
  const releaseOnExit = () => {
    try {
      if (readFileSync(file, 'utf8') === text) unlinkSync(file);
    } catch {
      // Already gone.
    }
  };
  process.once('exit', releaseOnExit);
  let released: Promise<void> | undefined;
  return {
    file,
    holder,
    release: () =>
      (released ??= (async () => {
        process.off('exit', releaseOnExit);
        const current = await readFile(file, 'utf8').catch(() => undefined);
        if (current === text) await unlink(file).catch(() => {});
        heldHere.delete(path);
      })()),
  };
}
