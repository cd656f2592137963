import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { temporaryDataDir } from '../../test-support/spawn-example.ts';

const evalFile = fileURLToPath(new URL('../src/eval.ts', import.meta.url));
const run = (args: string[]) =>
  promisify(execFile)(process.execPath, [evalFile, ...args], {
    // No provider key: the offline demo model, as a fresh checkout runs it.
    env: { PATH: process.env.PATH, LOG_LEVEL: 'silent' },
    cwd: fileURLToPath(new URL('..', import.meta.url)),
  });

describe('npm run eval', () => {
  it('runs the support scenarios on the configured model, writes the report as JSON and HTML, records and replays', async () => {
    const out = temporaryDataDir();
    const fixtures = join(out, 'fixtures.json');
    const first = await run(['--out', out, '--record', fixtures]);
    expect(first.stdout).toMatch(/^deskpilot:offline-demo: (\d+)\/\1 scenarios passed/);
    const [json] = readdirSync(out).filter((name) => name.endsWith('.json') && name !== 'fixtures.json');
    const report = JSON.parse(readFileSync(join(out, json!), 'utf8')) as { passed: number; total: number };
    expect(report.passed).toBe(report.total);
    expect(readFileSync(join(out, json!.replace(/\.json$/, '.html')), 'utf8')).toContain('<table>');
    const replayed = await run(['--out', out, '--replay', fixtures, '--compare', join(out, json!)]);
    expect(replayed.stdout).toContain(
      `deskpilot:offline-demo → deskpilot:offline-demo: ${report.total}/${report.total} → ${report.total}/${report.total}`,
    );
  }, 60_000);

  it('exits 1 with a clear message for a provider without a key', async () => {
    const failed = await run(['--provider', 'openai']).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 1 });
    expect((failed as { stderr: string }).stderr).toContain('--provider openai: that provider has no key');
    const misnamed = await run(['--provider', 'antropic']).catch((error: { code: number; stderr: string }) => error);
    expect(misnamed).toMatchObject({
      code: 1,
      stderr: '--provider antropic: the providers are openai and anthropic\n',
    });
    const unjudged = await run(['--judge', 'gpt-5.4-mini']).catch((error: { code: number; stderr: string }) => error);
    expect(unjudged).toMatchObject({ code: 1, stderr: '--judge needs JUDGE_API_KEY (or OPENAI_API_KEY)\n' });
  });
});
