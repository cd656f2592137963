import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// What each published package ships is its own code only: a library it imports (a dependency, a
// peer) stays an import, resolved to the one copy the app installs. A library the manifest does not
// name is copied into dist by the build, and a second copy of a test runner, say, registers nothing
// with the one that runs the suite. The build marks what it copied with its node_modules path.
const packages = fileURLToPath(new URL('../packages/', import.meta.url));

describe('published builds', () => {
  it('inline no library: every import of another package stays an import (needs `npm run build`)', () => {
    const inlined: string[] = [];
    for (const name of readdirSync(packages)) {
      const dist = path.join(packages, name, 'dist');
      if (!existsSync(dist)) continue;
      for (const file of readdirSync(dist, { recursive: true })
        .map(String)
        .filter((entry) => entry.endsWith('.js'))) {
        const copied = [
          ...readFileSync(path.join(dist, file), 'utf8').matchAll(/^\/\/ .*node_modules\/((?:@[^/]+\/)?[^/]+)/gm),
        ];
        for (const [, library] of copied) inlined.push(`${name}/dist/${file}: ${library}`);
      }
    }
    expect([...new Set(inlined)]).toEqual([]);
  });
});
