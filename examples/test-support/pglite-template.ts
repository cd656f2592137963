import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

// initdb takes seconds and every fresh embedded database repeats it; a copy of one made earlier takes
// milliseconds. The servers still migrate it on start, as they would a database of an older version.
function pgliteVersion(): string {
  // The package exports no ./package.json: walk up from its entry point.
  for (
    let directory = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
    directory !== dirname(directory);
    directory = dirname(directory)
  ) {
    const manifest = join(directory, 'package.json');
    if (!existsSync(manifest)) continue;
    const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
    if (name === '@electric-sql/pglite' && version) return version;
  }
  throw new Error('Cannot find the version of @electric-sql/pglite.');
}

const templateDir = join(tmpdir(), `deskpilot-pglite-template-${pgliteVersion()}`);

let ready: Promise<string> | undefined;

/** A freshly initialised, closed PGlite directory, made once per machine and PGlite version. */
function template(): Promise<string> {
  return (ready ??= (async () => {
    if (existsSync(join(templateDir, 'PG_VERSION'))) return templateDir;
    const building = mkdtempSync(join(tmpdir(), 'deskpilot-pglite-template-building-'));
    const db = await PGlite.create(building);
    await db.close();
    try {
      renameSync(building, templateDir);
    } catch {
      // Another test process made it first.
      rmSync(building, { recursive: true, force: true });
    }
    return templateDir;
  })());
}

/** Puts an initialised embedded database in each of `services` under `root` (`<root>/<service>`). */
export async function seedEmbeddedDatabases(
  root: string,
  services: readonly string[] = ['chat', 'session'],
): Promise<void> {
  const source = await template();
  for (const service of services) {
    mkdirSync(root, { recursive: true });
    cpSync(source, join(root, service), { recursive: true });
  }
}
