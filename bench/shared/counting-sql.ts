// A Postgres client that counts the statements sent through it (transactions' included): what the
// benches that promise "N statements per request" read.
import type { SqlClient, SqlExecutor } from '@deskpilot/postgres';

/** Statements sent through every client {@link countingSql} made. */
export const counter = { statements: 0 };

/** `client`, counting each statement it sends in {@link counter}. */
export function countingSql(client: SqlClient): SqlClient {
  const counted = (executor: SqlExecutor): SqlExecutor => ({
    query: (sql, params) => {
      counter.statements += 1;
      return executor.query(sql, params);
    },
  });
  return {
    ...counted(client),
    transaction: (fn) => client.transaction((transaction) => fn(counted(transaction))),
    close: () => client.close(),
  };
}
