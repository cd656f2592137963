/** One row of a result: column name → value (`int2`/`int4`/`int8` as numbers, `json`/`jsonb` parsed). */
export type SqlRow = Record<string, unknown>;

/** What a statement returned. */
export interface SqlResult<Row extends SqlRow = SqlRow> {
  rows: Row[];
  /** Rows returned by a `SELECT` or changed by an `INSERT`/`UPDATE`/`DELETE`. */
  rowCount: number;
}

/** Runs one parameterised statement (`$1`, `$2`, …). */
export interface SqlExecutor {
  /** Runs `sql` with `params`; infrastructure failures reject with a `store_unavailable` `DeskpilotError`. */
  query<Row extends SqlRow = SqlRow>(sql: string, params?: readonly unknown[]): Promise<SqlResult<Row>>;
}

/**
 * The driver seam every Deskpilot store runs on: `pg` through {@link fromPgPool}, PGlite through
 * {@link fromPglite}. One schema and one set of statements serve both.
 */
export interface SqlClient extends SqlExecutor {
  /**
   * Runs `fn` on one connection inside `BEGIN` … `COMMIT`; any error rolls everything back and is
   * rethrown. Statements must go through the executor `fn` receives, not through this client.
   */
  transaction<T>(fn: (transaction: SqlExecutor) => Promise<T>): Promise<T>;
  /** Closes the pool or the embedded database. */
  close(): Promise<void>;
}
