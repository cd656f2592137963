import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The entries table of each package's README, checked against its manifest's `exports`: an entry added
// or removed fails here until its row is.
const packagesWithEntries = ['core', 'passkeys', 'sso', 'magic-link'];

describe('README entry tables', () => {
  it.each(packagesWithEntries)('%s: one row for each entry of its exports, and no other', (folder) => {
    const root = new URL(`../packages/${folder}/`, import.meta.url);
    const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
      name: string;
      exports: Record<string, unknown>;
    };
    const readme = readFileSync(new URL('README.md', root), 'utf8');
    const rows = [...readme.matchAll(/^\| `(@deskpilot\/[\w-]+(?:\/[\w-]+)?)` \|/gm)].map(([, entry]) => entry!);
    const entries = Object.keys(manifest.exports)
      .filter((subpath) => subpath !== './package.json')
      .map((subpath) => (subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`));
    expect([...rows].sort()).toEqual(entries.sort());
  });
});
