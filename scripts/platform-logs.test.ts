// `npm start` runs three servers in one process, each with its own logger: their JSON lines share one
// standard output, so they share one destination (separate asynchronous destinations on one
// descriptor interleave their writes mid-line once the pipe is full), and every line is out before the
// process exits.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { symbols } from 'pino';
import { expect, it } from 'vitest';
import { createLogger } from '../examples/shared/logging.ts';

const logging = fileURLToPath(new URL('../examples/shared/logging.ts', import.meta.url));

it('gives the loggers of one process one destination', () => {
  const loggers = ['session-server', 'chat-server', 'studio'].map((service) =>
    createLogger({ service, level: 'silent', format: 'json' }),
  );
  const streams = new Set(loggers.map((logger) => (logger as unknown as Record<symbol, unknown>)[symbols.streamSym]));
  expect(streams.size).toBe(1);
});

it('writes out every line of three busy loggers, whole, before process.exit', async () => {
  const script = `
    const { createLogger, closeLogs } = await import(${JSON.stringify(logging)});
    const loggers = ['session-server', 'chat-server', 'studio'].map((service) =>
      createLogger({ service, level: 'info', format: 'json' }));
    for (let round = 0; round < 200; round++) {
      for (let line = 0; line < 50; line++)
        for (const [index, logger] of loggers.entries()) logger.info({ round, line, padding: 'x'.repeat(40 * index) }, 'busy');
      await new Promise((resolve) => setImmediate(resolve));
    }
    await closeLogs();
    process.exit(0);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
  const [code] = (await once(child, 'exit')) as [number | null];
  expect(code).toBe(0);
  const lines = output.trimEnd().split('\n');
  const broken = lines.filter((line) => {
    try {
      return (JSON.parse(line) as { msg?: unknown }).msg !== 'busy';
    } catch {
      return true;
    }
  });
  expect(broken).toEqual([]);
  expect(lines).toHaveLength(3 * 200 * 50);
}, 60_000);
