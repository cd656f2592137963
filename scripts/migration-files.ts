// packages/postgres/migrations/*.sql, written from the migrations the package runs itself, so that
// teams applying schema changes with their own tool get exactly what `migrate` does.
//   node scripts/migration-files.ts           rewrites the files
//   node scripts/migration-files.ts --check   exits 1 when a file is missing or stale
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { migrationFiles } from '@deskpilot/postgres';

export const migrationsDirectory = fileURLToPath(new URL('../packages/postgres/migrations/', import.meta.url));

/** What differs between the directory and the migrations: file names missing, stale or extra. */
export function staleMigrationFiles(directory = migrationsDirectory): string[] {
  const expected = migrationFiles();
  const present = new Set(readdirSync(directory).filter((name) => name.endsWith('.sql')));
  const stale = expected
    .filter((file) => !present.has(file.name) || readFileSync(`${directory}${file.name}`, 'utf8') !== file.sql)
    .map((file) => file.name);
  const extra = [...present].filter((name) => !expected.some((file) => file.name === name));
  return [...stale, ...extra];
}

if (import.meta.main) {
  if (process.argv.includes('--check')) {
    const stale = staleMigrationFiles();
    if (stale.length > 0) {
      console.error(
        `packages/postgres/migrations is stale (${stale.join(', ')}); run \`node scripts/migration-files.ts\`.`,
      );
      process.exit(1);
    }
  } else {
    mkdirSync(migrationsDirectory, { recursive: true });
    for (const file of migrationFiles()) writeFileSync(`${migrationsDirectory}${file.name}`, file.sql);
  }
}
