import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as demo from './demo.js';
import * as root from './index.js';

const demoValues = [
  'createDemoCommerceBackend',
  'createDemoModel',
  'createDemoTicketBackend',
  'demoModelId',
  'demoModelProvider',
  'demoUsers',
];

/**
 * Every non-test source file of core outside the demo and the test kits (`@deskpilot/core/testing`,
 * whose test service seeds the demo users, is an entry of its own above everything), with its path
 * from `src`.
 */
function rootSources(): Array<{ path: string; source: string }> {
  const sourceDirectory = fileURLToPath(new URL('.', import.meta.url));
  return readdirSync(sourceDirectory, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts') && !/\.test(-support)?\.ts$/.test(path))
    .filter((path) => path !== 'demo.ts' && !path.startsWith('demo/'))
    .filter((path) => path !== 'testing.ts' && !path.startsWith('testing/'))
    .map((path) => ({ path, source: readFileSync(`${sourceDirectory}${path}`, 'utf8') }));
}

describe('@deskpilot/core/demo', () => {
  it('holds the demo model, demo backends and demo users, and the root entry none of them', () => {
    expect(Object.keys(demo).sort()).toEqual(demoValues);
    for (const name of demoValues) expect(root).not.toHaveProperty(name);
  });

  it('is imported by no module of the root entry, so the root bundle carries none of it', () => {
    const sources = rootSources();
    expect(sources.map(({ path }) => path)).toContain('index.ts');
    const importsDemo = sources
      .filter(({ source }) => /from '[./]*\/demo(\.js|\/[^']*)'/.test(source))
      .map(({ path }) => path);
    expect(importsDemo).toEqual([]);
  });
});
