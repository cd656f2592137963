import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/** A small file system of its own (tmpfs) that a test can fill, free and make read-only. */
export interface SmallDisk {
  path: string;
  /** Bytes still free. */
  free(): number;
  /** Fills the disk to the last byte with a filler file. */
  fill(): void;
  /** Removes the filler file. */
  unfill(): void;
  readOnly(): void;
  readWrite(): void;
}

function mountTmpfs(path: string, sizeBytes: number): string | undefined {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', path], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return String((error as { stderr?: unknown }).stderr ?? error).trim() || 'mount failed';
  }
}

/** Why small disks are not available here, or undefined when they are (mounting needs root). */
export const smallDiskUnavailable: string | undefined = (() => {
  if (process.platform !== 'linux') return 'tmpfs mounts need Linux';
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  const probe = mkdtempSync(join(tmpdir(), 'deskpilot-tmpfs-probe-'));
  try {
    const reason = mountTmpfs(probe, 1024 * 1024);
    if (reason === undefined) execFileSync('umount', [probe]);
    return reason && `mounting a tmpfs failed: ${reason}`;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
})();

/** Mounts a tmpfs of `sizeBytes` for this test (check {@link smallDiskUnavailable} first); unmounted afterwards. */
export function smallDisk(sizeBytes: number): SmallDisk {
  const path = mkdtempSync(join(tmpdir(), 'deskpilot-disk-'));
  const reason = mountTmpfs(path, sizeBytes);
  if (reason !== undefined) throw new Error(`cannot mount a tmpfs: ${reason}`);
  onTestFinished(() => {
    // Lazy: a server killed a moment ago may still hold files open.
    execFileSync('umount', ['-l', path]);
    rmSync(path, { recursive: true, force: true });
  });
  const filler = join(path, 'filler');
  const free = () => {
    const stats = statfsSync(path);
    return stats.bavail * stats.bsize;
  };
  return {
    path,
    free,
    fill() {
      try {
        // More than fits: the write stops at the last free byte with ENOSPC.
        writeFileSync(filler, new Uint8Array(free() + 1024 * 1024), { flag: 'a' });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      }
    },
    unfill: () => rmSync(filler, { force: true }),
    readOnly: () => void execFileSync('mount', ['-o', 'remount,ro', path]),
    readWrite: () => void execFileSync('mount', ['-o', 'remount,rw', path]),
  };
}
