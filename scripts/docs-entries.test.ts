import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { platformPorts } from './platform-ports.ts';

// The entries table of each package's README, checked against its manifest's `exports`: an entry added
// or removed fails here until its row is.
const packagesWithEntries = ['core', 'passkeys', 'sso', 'magic-link', 'scim', 'usage'];

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

  it("the repository README's table lists every published package, and the default ports of the platform", () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const listed = [...readme.matchAll(/^\| \[`(@deskpilot\/[\w-]+)`\]\(packages\/([\w-]+)\/README\.md\)/gm)];
    const published = readdirSync(new URL('../packages/', import.meta.url)).filter((folder) => {
      const manifest = JSON.parse(
        readFileSync(new URL(`../packages/${folder}/package.json`, import.meta.url), 'utf8'),
      ) as { private?: boolean };
      return manifest.private !== true;
    });
    expect(listed.map(([, , folder]) => folder).sort()).toEqual(published.sort());
    for (const [, name, folder] of listed) expect(name).toBe(`@deskpilot/${folder}`);
    const ports = platformPorts();
    for (const [folder, service] of [
      ['session-server', ports.session],
      ['chat-server', ports.chat],
      ['studio', ports.studio],
    ] as const)
      expect(readme).toMatch(new RegExp(`\\(examples/${folder}/README\\.md\\) \\| [^|]*\\(port ${service.port}\\)`));
    expect(readme).toContain(`knowledge base as an MCP server (:${ports.knowledgeBase.port})`);
  });
});
