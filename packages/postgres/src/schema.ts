import type { SqlExecutor } from './sql-client.js';

/** A schema name Deskpilot puts in `search_path` and `CREATE SCHEMA`: an unquoted Postgres identifier. */
const schemaName = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Throws a TypeError naming the rule when `schema` is not a plain identifier (it goes into SQL unquoted). */
export function checkSchemaName(schema: string): void {
  if (!schemaName.test(schema))
    throw new TypeError(
      `schema must be a plain identifier (letters, digits, _; at most 63), not ${JSON.stringify(schema.slice(0, 70))}`,
    );
}

/**
 * Creates `schema` when it is missing (the connection's `search_path` names it: see `openDatabase`'s
 * `schema`). Replicas starting together on a new schema race: `IF NOT EXISTS` is checked before the
 * insert, so the loser of two concurrent creations fails with a unique violation on the catalogue
 * (23505) or `duplicate_schema` (42P06). Either means the schema now exists, which is all that is asked.
 */
export async function prepareSchema(client: SqlExecutor, schema: string): Promise<void> {
  checkSchemaName(schema);
  // A schema that exists is left alone: Postgres checks the right to create one (which a least-privilege
  // role given its own schema by a DBA lacks) before it looks at `IF NOT EXISTS`.
  const existing = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  if (existing.rows.length > 0) return;
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code !== '23505' && code !== '42P06') throw error;
  }
}
