import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { onTestFinished } from 'vitest';

/**
 * A fresh schema on the machine's Postgres for one test, dropped afterwards; resolves to a connection
 * URL whose sessions use it (`search_path`), so servers started with it share only that schema.
 */
export async function freshPostgresSchema(databaseUrl: string): Promise<string> {
  const schema = await droppedAfterTest(databaseUrl);
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** A schema name no one uses yet; whatever creates it, it is dropped (with its tables) when the test ends. */
export async function droppedAfterTest(databaseUrl: string): Promise<string> {
  const schema = `dp_test_${randomBytes(6).toString('hex')}`;
  onTestFinished(async () => {
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });
  return schema;
}
