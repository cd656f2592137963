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
const compileCache = new URL('../../shared/compile-cache.mjs', import.meta.url).href;
const probe = new URL('../../test-support/type-stripper-probe.mjs', import.meta.url).href;

/**
 * Starts the server as `npm start` does, with `temp` as the system's temporary folder (where the cache
 * goes by default: NODE_COMPILE_CACHE is unset, or Node would turn the cache on by itself); resolves to
 * what the probe saw once it stopped.
 */
async function startAndStop(temp: string): Promise<string> {
  const server = await spawnExample(serverFile, {
    NODE_OPTIONS: `--import ${compileCache} --import ${probe}`,
    NODE_COMPILE_CACHE: undefined,
    TMPDIR: temp,
  });
  expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  server.child.kill('SIGTERM');
  expect(await exitCode(server.child)).toBe(0);
  return /^TYPE STRIPPER (.+)$/m.exec(server.output())?.[1] ?? 'no probe line';
}

describe('reference servers: compile cache', () => {
  it('npm start turns it on for each server', () => {
    for (const example of ['session-server', 'chat-server', 'studio']) {
      const manifest = JSON.parse(readFileSync(new URL(`../../${example}/package.json`, import.meta.url), 'utf8')) as {
        scripts: { start: string };
      };
      expect(manifest.scripts.start).toBe('node --import ../shared/compile-cache.mjs src/server.ts');
    }
  });

  it('strips types on the first start only', async () => {
    const temp = mkdtempSync(join(tmpdir(), 'deskpilot-compile-cache-'));
    onTestFinished(() => rmSync(temp, { recursive: true, force: true }));
    expect(await startAndStop(temp)).toBe('loaded');
    expect(readdirSync(join(temp, 'node-compile-cache'))).not.toEqual([]);
    expect(await startAndStop(temp)).toBe('not loaded');
  });

  it('still starts when the cache folder cannot be written', async () => {
    // A file where the folder should be: Node reports the cache as failed and runs without it.
    const temp = mkdtempSync(join(tmpdir(), 'deskpilot-compile-cache-'));
    onTestFinished(() => rmSync(temp, { recursive: true, force: true }));
    writeFileSync(join(temp, 'node-compile-cache'), '');
    expect(await startAndStop(temp)).toBe('loaded');
    expect(await startAndStop(temp)).toBe('loaded');
  });
});
