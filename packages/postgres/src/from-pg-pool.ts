import { createHash } from 'node:crypto';
import { types as globalTypes } from 'pg';
import type { SqlClient, SqlExecutor, SqlResult, SqlRow } from './sql-client.js';
import { sqlValueParsers } from './sql-value-parsers.js';
import { toStoreError } from './to-store-error.js';

/** A query as `pg` accepts it, with per-query type parsers. */
interface PgQueryConfig {
  /** Set for a prepared statement: `pg` parses it once per connection, then only binds and runs it. */
  name?: string;
  text: string;
  values: unknown[];
  types: { getTypeParser: (oid: number, format?: string) => (value: string) => unknown };
}

/** What {@link fromPgPool} needs of a `pg` client checked out of a pool. */
export interface PgPoolClientLike {
  query(config: PgQueryConfig): Promise<{ rows: SqlRow[]; rowCount: number | null }>;
  release(error?: Error | boolean): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  off(event: 'error', listener: (error: Error) => void): unknown;
}

/** What {@link fromPgPool} needs of a `pg` `Pool` (structural, so any `pg` 8 version fits). */
export interface PgPoolLike {
  query(config: PgQueryConfig): Promise<{ rows: SqlRow[]; rowCount: number | null }>;
  connect(): Promise<PgPoolClientLike>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error, client: unknown) => void): unknown;
}

// Our parsers for the column types we own; anything else keeps the host's (global) choice.
const types: PgQueryConfig['types'] = {
  getTypeParser: (oid, format) =>
    sqlValueParsers[oid] ?? (globalTypes.getTypeParser(oid, format as 'text') as (value: string) => unknown),
};

const ignore = () => {};

/**
 * True when the connection itself failed (timed out, reset, closed): a ROLLBACK on it would only wait
 * for the same silence again. Destroying the connection ends the transaction on the server as well.
 */
function connectionFailed(error: unknown): boolean {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (!(cause instanceof Error)) return false;
  const code = (cause as { code?: unknown }).code;
  return (
    (typeof code === 'string' && /^(E[A-Z_]+|08...)$/.test(code)) ||
    /Query read timeout|Connection terminated|not queryable/i.test(cause.message)
  );
}

/** Options of {@link fromPgPool}. */
export interface FromPgPoolOptions {
  /**
   * Send parameterised statements as named prepared statements, so Postgres parses and plans each
   * text once per connection instead of on every call. Turn it off behind a pooler that hands one
   * client's statements to different server connections without tracking prepared statements
   * (PgBouncer in transaction mode before 1.21, or without `max_prepared_statements`).
   * @default true
   */
  preparedStatements?: boolean;
}

// Each name stays prepared on every connection that ran it, so only so many texts get one: the
// stores send a few dozen fixed texts, and a caller building texts on the fly gets unnamed ones.
const maxPreparedTexts = 500;

/** Names statements by a hash of their text: the same text always gets the same name, in any process. */
function createStatementNamer(): (sql: string, params: readonly unknown[]) => string | undefined {
  const names = new Map<string, string>();
  return (sql, params) => {
    // Without parameters: `BEGIN`, DDL, scripts of several statements, which cannot be prepared.
    if (params.length === 0) return undefined;
    let name = names.get(sql);
    if (name === undefined && names.size < maxPreparedTexts) {
      name = `deskpilot_${createHash('sha256').update(sql).digest('hex').slice(0, 32)}`;
      names.set(sql, name);
    }
    return name;
  };
}

type StatementNamer = ReturnType<typeof createStatementNamer>;

async function run<Row extends SqlRow>(
  target: Pick<PgPoolLike, 'query'>,
  nameOf: StatementNamer | undefined,
  sql: string,
  params: readonly unknown[] = [],
): Promise<SqlResult<Row>> {
  try {
    const config: PgQueryConfig = { text: sql, values: [...params], types };
    const name = nameOf?.(sql, params);
    if (name !== undefined) config.name = name;
    const result = await target.query(config);
    return { rows: result.rows as Row[], rowCount: result.rowCount ?? result.rows.length };
  } catch (error) {
    throw toStoreError(error);
  }
}

/**
 * Wraps a `pg` `Pool` as a {@link SqlClient}. It adds an `error` listener to the pool: an idle
 * connection dropped by the server (restart, failover) is then discarded and replaced instead of
 * crashing the process with an unhandled `error` event. Parameterised statements run as prepared
 * statements unless `preparedStatements` is false.
 *
 * @example
 * import { Pool } from 'pg';
 * const client = fromPgPool(new Pool({ connectionString: process.env.DATABASE_URL }));
 * await migrate(client);
 */
export function fromPgPool(pool: PgPoolLike, options: FromPgPoolOptions = {}): SqlClient {
  pool.on('error', ignore);
  const nameOf = options.preparedStatements === false ? undefined : createStatementNamer();
  return {
    query: (sql, params) => run(pool, nameOf, sql, params),
    async transaction(fn) {
      let connection: PgPoolClientLike;
      try {
        connection = await pool.connect();
      } catch (error) {
        throw toStoreError(error);
      }
      // A checked-out client has no pool listener: a connection lost between two statements would
      // otherwise be an unhandled `error` event. The failed statement reports it instead.
      connection.on('error', ignore);
      const executor: SqlExecutor = { query: (sql, params) => run(connection, nameOf, sql, params) };
      let broken: Error | undefined;
      try {
        await executor.query('BEGIN');
        const result = await fn(executor);
        await executor.query('COMMIT');
        return result;
      } catch (error) {
        if (connectionFailed(error)) {
          broken = error instanceof Error ? error : new Error('Connection failed');
          throw error;
        }
        try {
          await executor.query('ROLLBACK');
        } catch (rollbackError) {
          // The connection is unusable: destroy it rather than return it to the pool mid-transaction.
          broken = rollbackError instanceof Error ? rollbackError : new Error('Rollback failed');
        }
        throw error;
      } finally {
        connection.off('error', ignore);
        connection.release(broken ?? false);
      }
    },
    close: () => pool.end(),
  };
}
