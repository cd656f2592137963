import type { SqlClient, SqlExecutor, SqlResult, SqlRow } from './sql-client.js';
import { sqlValueParsers } from './sql-value-parsers.js';
import { toStoreError } from './to-store-error.js';

type PgliteQuery = (
  sql: string,
  params?: unknown[],
  options?: { parsers?: Record<number, (value: string) => unknown> },
) => Promise<{ rows: unknown[]; rowCount?: number; affectedRows?: number }>;

/** What {@link fromPglite} needs of a PGlite instance (structural: PGlite stays an optional peer). */
export interface PgliteLike {
  query: PgliteQuery;
  transaction<T>(callback: (transaction: { query: PgliteQuery }) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const options = { parsers: sqlValueParsers };

async function run<Row extends SqlRow>(
  query: PgliteQuery,
  sql: string,
  params: readonly unknown[] = [],
): Promise<SqlResult<Row>> {
  try {
    const result = await query(sql, [...params], options);
    return { rows: result.rows as Row[], rowCount: result.rowCount ?? result.affectedRows ?? result.rows.length };
  } catch (error) {
    // PGlite attaches the statement's parameters to its errors: keep secret digests and password
    // hashes out of the logs that record this error as a cause.
    if (error instanceof Error && 'params' in error) delete (error as { params?: unknown }).params;
    throw toStoreError(error);
  }
}

/**
 * Wraps a PGlite instance (embedded Postgres in WebAssembly) as a {@link SqlClient}. PGlite runs one
 * statement at a time; a transaction holds it exclusively until it commits or rolls back.
 *
 * @example
 * import { PGlite } from '@electric-sql/pglite';
 * const client = fromPglite(await PGlite.create('./.data/session'));
 * await migrate(client);
 */
export function fromPglite(db: PgliteLike): SqlClient {
  const query = db.query.bind(db);
  return {
    query: (sql, params) => run(query, sql, params),
    async transaction(fn) {
      try {
        return await db.transaction((transaction) => {
          const executor: SqlExecutor = {
            query: (sql, params) => run(transaction.query.bind(transaction), sql, params),
          };
          return fn(executor);
        });
      } catch (error) {
        throw toStoreError(error);
      }
    },
    close: () => db.close(),
  };
}
