import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';

// What an adopter installs with `@deskpilot/core` alone: its packed tarball, installed into an empty
// project as a user would (npm installs the peers too), then every package that came with it listed.
const core = fileURLToPath(new URL('../packages/core/', import.meta.url));
const manifest = JSON.parse(readFileSync(path.join(core, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

/** Every package under `node_modules`, nested ones included, as `name@version`. */
function installed(directory: string): string[] {
  const found: string[] = [];
  const visit = (modules: string) => {
    let entries: string[];
    try {
      entries = readdirSync(modules);
    } catch {
      return;
    }
    for (const entry of entries.filter((name) => !name.startsWith('.'))) {
      const folders = entry.startsWith('@')
        ? readdirSync(path.join(modules, entry)).map((name) => path.join(modules, entry, name))
        : [path.join(modules, entry)];
      for (const folder of folders) {
        const { name, version } = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as {
          name: string;
          version: string;
        };
        found.push(`${name}@${version}`);
        visit(path.join(folder, 'node_modules'));
      }
    }
  };
  visit(path.join(directory, 'node_modules'));
  return found.sort();
}

describe('@deskpilot/core installed alone from its tarball', () => {
  it('brings its dependencies and its required peers, each package once', { timeout: 240_000 }, () => {
    const project = mkdtempSync(path.join(tmpdir(), 'deskpilot-adopter-'));
    onTestFinished(() => rmSync(project, { recursive: true, force: true }));
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--pack-destination', project], { cwd: core, encoding: 'utf8' }),
    ) as Array<{ filename: string }>;
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'adopter', private: true }));
    execFileSync(
      'npm',
      ['install', `./${packed!.filename}`, '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline'],
      { cwd: project, stdio: 'pipe' },
    );
    const packages = installed(project);
    const names = packages.map((entry) => entry.slice(0, entry.lastIndexOf('@')));
    // One copy of each (eventsource-parser, zod…).
    expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
    // The WebAuthn and OpenID libraries come with their modules' packages, never with core.
    expect(names).not.toEqual(expect.arrayContaining(['@simplewebauthn/server']));
    expect(names).not.toEqual(expect.arrayContaining(['openid-client']));
    const requiredPeers = Object.keys(manifest.peerDependencies).filter(
      (name) => !manifest.peerDependenciesMeta?.[name]?.optional,
    );
    expect(names).toEqual(expect.arrayContaining(['@deskpilot/core', ...Object.keys(manifest.dependencies)]));
    expect(names).toEqual(expect.arrayContaining(requiredPeers));
    // The figure CONTRIBUTING.md quotes ("Dependencies"): what an adopter's install holds.
    console.info(
      `@deskpilot/core alone installs ${packages.length - 1} packages beside itself:\n${packages.join('\n')}`,
    );
  });
});
