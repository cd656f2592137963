import type { SqlExecutor } from './sql-client.js';

/** A schema name Deskpilot puts in `search_path` and `CREATE SCHEMA`: an unquoted Postgres identifier. */
const schemaName = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Throws a TypeError naming the rule when `schema` is not a plain identifier (it goes into SQL unquoted). */
export function checkSchemaName(schema: string): void {
  if (!schemaName.test(schema)) throw new TypeError(`schema must be a plain identifier (letters, digits, _; at most 63), not ${JSON.stringify(schema.slice(0, 70))}`);
}

/** Creates `schema` when it is missing (the connection's `search_path` names it: see `openDatabase`'s `schema`). */
export async function prepareSchema(client: SqlExecutor, schema: string): Promise<void> {
  checkSchemaName(schema);
  await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
}
