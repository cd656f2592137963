import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { seedEmbeddedDatabases } from './pglite-template.ts';

/** Registers what to undo when the test (default) or a whole suite is over. */
export type CleanupRegistrar = (cleanup: () => void) => void;

/** A fresh data folder for an embedded database, removed after the test. */
export function temporaryDataDir(onCleanup: CleanupRegistrar = onTestFinished): string {
  const directory = mkdtempSync(join(tmpdir(), 'deskpilot-test-'));
  onCleanup(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

/** A fresh data root whose PGlite databases (`<root>/<service>`) are already initialised: a copy, no initdb on start. */
export async function seededDataDir(
  services: readonly string[] = ['chat', 'session'],
  onCleanup: CleanupRegistrar = onTestFinished,
): Promise<string> {
  const directory = temporaryDataDir(onCleanup);
  await seedEmbeddedDatabases(directory, services);
  return directory;
}

/** A reference server running as a real process. */
export interface RunningExample {
  child: ChildProcess;
  url: string;
  /** Everything it printed so far. */
  output(): string;
}

/**
 * Starts `serverFile` on an ephemeral port (needs `npm run build`) and waits for "listening on". The
 * process is killed when the test is over, or when `onCleanup` says (a suite sharing it).
 */
export async function spawnExample(
  serverFile: string,
  env: Record<string, string | undefined> = {},
  onCleanup: CleanupRegistrar = onTestFinished,
): Promise<RunningExample> {
  // Each server gets its own embedded database unless the test names one (DATA_DIR or DATABASE_URL):
  // SQLite creates its file in milliseconds; PGlite's directory is copied from an initialised one.
  const service = /(chat|session)-server/.exec(serverFile)?.[1];
  const dataDir =
    env.DATA_DIR ??
    (env.EMBEDDED_DATABASE === 'pglite'
      ? await seededDataDir(service ? [service] : [], onCleanup)
      : temporaryDataDir(onCleanup));
  const child = spawn(process.execPath, [serverFile], {
    env: { ...process.env, PORT: '0', DATABASE_URL: '', REDIS_URL: '', ...env, DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onCleanup(() => void child.kill('SIGKILL'));
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const match = /listening on (http:\/\/[^\s"]+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${output}`)));
  });
  return { child, url, output: () => output };
}

/** Runs `serverFile` to its exit with a bad environment; resolves to its exit code and stderr. */
export async function runToExit(
  serverFile: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [serverFile], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // A server that never exits (the defect under test) must not outlive the test that timed out on it.
  onTestFinished(() => void child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return { code: await exitCode(child), stderr };
}

/** Resolves when the process exits, to its exit code. */
export async function exitCode(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const [code] = await once(child, 'exit');
  return code as number | null;
}
