import { readFileSync } from 'node:fs';
import { createDeskpilotClient } from '@deskpilot/client';
import { describe, expect, it } from 'vitest';

// The client's README table, checked against the client: a method added, renamed or removed fails
// here until its row is written, renamed or removed.
const readme = readFileSync(new URL('../packages/client/README.md', import.meta.url), 'utf8');

describe("the client's README", () => {
  it('lists every method of the client, once, and no other', () => {
    const rows = [...readme.matchAll(/^\| `(\w+)\(/gm)].map(([, name]) => name!);
    expect(rows.filter((name, index) => rows.indexOf(name) !== index)).toEqual([]);
    const methods = Object.keys(createDeskpilotClient({ fetch: async () => new Response(null) }));
    expect([...rows].sort()).toEqual([...methods].sort());
  });
});
