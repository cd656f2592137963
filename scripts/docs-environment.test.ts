import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { environment as chatEnvironment } from '../examples/chat-server/src/config.ts';
import { environment as sessionEnvironment } from '../examples/session-server/src/config.ts';
import { environment as studioEnvironment } from '../examples/studio/src/config.ts';

// Each reference server's README table of environment variables, checked against the variables its
// configuration reads: a variable added, renamed or removed fails here until its row is.
const servers = [
  ['session-server', sessionEnvironment],
  ['chat-server', chatEnvironment],
  ['studio', studioEnvironment],
] as const;

describe('README environment tables', () => {
  it.each(servers)('%s: one row for each variable its configuration reads, and no other', (folder, schema) => {
    const readme = readFileSync(new URL(`../examples/${folder}/README.md`, import.meta.url), 'utf8');
    // A row's first cell names one variable or a few (`METRICS_PORT`, `METRICS_HOST`).
    const rows = [...readme.matchAll(/^\| (`[A-Z][A-Z0-9_]*`(?:, `[A-Z][A-Z0-9_]*`)*) \|/gm)].flatMap(([, cell]) =>
      [...cell!.matchAll(/`([A-Z0-9_]+)`/g)].map(([, name]) => name!),
    );
    expect(rows.filter((name, index) => rows.indexOf(name) !== index)).toEqual([]);
    expect([...rows].sort()).toEqual(Object.keys(schema.shape).sort());
  });
});
