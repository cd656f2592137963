import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';

// A feature module as an adopter embeds it: core, the Postgres package and the passkeys module from
// their packed tarballs, in an empty project; its store, schema and events used from the published
// entries, type-checked against the published declarations and run on Node.
const root = fileURLToPath(new URL('../', import.meta.url));
const tsc = path.join(root, 'node_modules/.bin/tsc');

const app = `
import type { SessionEvent } from '@deskpilot/core';
import { type PasskeyEvent } from '@deskpilot/passkeys';
import { createPostgresPasskeyStore, passkeySchema } from '@deskpilot/passkeys/postgres';
import { openDatabase } from '@deskpilot/postgres';

// The module's events are SessionEvent's once the package is installed: the switch narrows them.
const describeEvent = (event: SessionEvent): string => {
  switch (event.type) {
    case 'passkey-removed':
      return 'removed for ' + event.email.length + ' characters of address';
    case 'passkey-sign-in':
      return event.outcome;
    default:
      return event.type;
  }
};
const removed: PasskeyEvent = { type: 'passkey-removed', email: 'rep@example.com' };

const db = await openDatabase({ modules: [passkeySchema] });
const store = createPostgresPasskeyStore(db.client);
await store.create({
  id: 'credential-1',
  userId: 'user-1',
  publicKey: 'pQECAyYgASFYIA',
  counter: 0,
  transports: ['internal'],
  deviceType: 'multiDevice',
  backedUp: true,
  name: 'Laptop',
  createdAt: 1,
  lastUsedAt: null,
});
const { rows } = await db.client.query('SELECT module, version FROM deskpilot_module_migrations');
await db.checkReady();
console.log(JSON.stringify({ event: describeEvent(removed), passkeys: (await store.listByUser('user-1')).length, rows }));
await db.close();
`;

describe('a module package embedded from its tarball', () => {
  it(
    'installs beside core and the Postgres package, type-checks against the published declarations, migrates its schema and keeps its store',
    { timeout: 300_000 },
    () => {
      const project = mkdtempSync(path.join(tmpdir(), 'deskpilot-module-adopter-'));
      onTestFinished(() => rmSync(project, { recursive: true, force: true }));
      const tarballs = ['core', 'postgres', 'passkeys'].map((name) => {
        const [packed] = JSON.parse(
          execFileSync('npm', ['pack', '--json', '--pack-destination', project], {
            cwd: path.join(root, 'packages', name),
            encoding: 'utf8',
          }),
        ) as Array<{ filename: string }>;
        return `./${packed!.filename}`;
      });
      writeFileSync(
        path.join(project, 'package.json'),
        JSON.stringify({ name: 'adopter', private: true, type: 'module' }),
      );
      execFileSync(
        'npm',
        [
          'install',
          ...tarballs,
          '@electric-sql/pglite',
          '@types/node@24',
          '--no-audit',
          '--no-fund',
          '--ignore-scripts',
          '--prefer-offline',
        ],
        { cwd: project, stdio: 'pipe' },
      );
      writeFileSync(path.join(project, 'app.ts'), app);
      writeFileSync(
        path.join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'es2023',
            lib: ['es2023', 'dom'],
            module: 'nodenext',
            moduleResolution: 'nodenext',
            strict: true,
            noEmit: true,
            types: ['node'],
            // As most projects have it: the ai SDK's declarations need more than a module adopter installs.
            skipLibCheck: true,
            allowImportingTsExtensions: true,
          },
          files: ['app.ts'],
        }),
      );
      // Strict: the adopter's code against the declarations we shipped.
      try {
        execFileSync(tsc, ['-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8' });
      } catch (error) {
        throw new Error(`the adopter's compiler refused it:\n${(error as { stdout: string }).stdout}`);
      }
      const output = execFileSync(process.execPath, ['app.ts'], { cwd: project, encoding: 'utf8' });
      expect(JSON.parse(output)).toEqual({
        event: 'removed for 15 characters of address',
        passkeys: 1,
        rows: [{ module: 'passkeys', version: 1 }],
      });
    },
  );
});
