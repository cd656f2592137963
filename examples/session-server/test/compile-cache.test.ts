// The reference servers start as `npm start` runs them, with Node's compile cache on
// (examples/shared/compile-cache.mjs): a start after the first strips no types, so the type stripper
// and its memory (15–19 MiB of an idle server) are not loaded.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { exitCode, spawnExample } from '../../test-support/spawn-example.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const compileCache = fileURLToPath(new URL('../../shared/compile-cache.mjs', import.meta.url));
const probe = fileURLToPath(new URL('../../test-support/type-stripper-probe.mjs', import.meta.url));

/** Starts the server as `npm start` does, with its compile cache in `cacheDir`; resolves to what the probe saw once it stopped. */
async function startAndStop(cacheDir: string): Promise<string> {
  const server = await spawnExample(serverFile, { NODE_OPTIONS: `--import ${compileCache} --import ${probe}`, NODE_COMPILE_CACHE: cacheDir });
  expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  server.child.kill('SIGTERM');
  expect(await exitCode(server.child)).toBe(0);
  return /^TYPE STRIPPER (.+)$/m.exec(server.output())?.[1] ?? 'no probe line';
}

describe('reference servers: compile cache', () => {
  it('npm start turns it on for each server', () => {
    for (const example of ['session-server', 'chat-server', 'studio']) {
      const manifest = JSON.parse(readFileSync(new URL(`../../${example}/package.json`, import.meta.url), 'utf8')) as { scripts: { start: string } };
      expect(manifest.scripts.start).toBe('node --import ../shared/compile-cache.mjs src/server.ts');
    }
  });

  it('strips types on the first start only', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'deskpilot-compile-cache-'));
    onTestFinished(() => rmSync(cacheDir, { recursive: true, force: true }));
    expect(await startAndStop(cacheDir)).toBe('loaded');
    expect(readdirSync(cacheDir)).not.toEqual([]);
    expect(await startAndStop(cacheDir)).toBe('not loaded');
  });

  it('still starts when the cache folder cannot be written', async () => {
    // A file where the folder should be: Node reports the cache as failed and runs without it.
    const parent = mkdtempSync(join(tmpdir(), 'deskpilot-compile-cache-'));
    onTestFinished(() => rmSync(parent, { recursive: true, force: true }));
    const blocked = join(parent, 'not-a-folder');
    writeFileSync(blocked, '');
    expect(await startAndStop(blocked)).toBe('loaded');
  });
});
