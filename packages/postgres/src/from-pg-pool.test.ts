import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPgPool } from './from-pg-pool.js';
import type { SqlClient } from './sql-client.js';
import { databaseUrl, onPostgres, openTestSchema } from './test-database.test-support.js';

describe.skipIf(!databaseUrl)(`fromPgPool ${onPostgres}`, () => {
  let schema: Awaited<ReturnType<typeof openTestSchema>>;
  beforeAll(async () => {
    schema = await openTestSchema({ migrate: false });
  }, 60_000);
  afterAll(() => schema?.close());

  // One connection per pool, so the statements prepared on it are the ones this client sent.
  const onOneConnection = (options?: { preparedStatements: boolean }) => fromPgPool(schema.pool({ max: 1 }), options);
  const prepared = async (client: SqlClient) =>
    (
      await client.query<{ name: string; statement: string }>(
        'SELECT name, statement FROM pg_prepared_statements ORDER BY statement',
      )
    ).rows;

  it('prepares each parameterised text once per connection, under a name derived from the text', async () => {
    const client = onOneConnection();
    for (const value of [1, 2, 3])
      expect((await client.query('SELECT $1::int AS n', [value])).rows).toEqual([{ n: value }]);
    await client.query('SELECT $1::text AS t', ['x']);
    const statements = await prepared(client);
    expect(statements.map((statement) => statement.statement)).toEqual(['SELECT $1::int AS n', 'SELECT $1::text AS t']);
    for (const { name } of statements) expect(name).toMatch(/^deskpilot_[0-9a-f]{32}$/);

    // Another client (another process, say) names the same text the same way.
    const other = onOneConnection();
    await other.query('SELECT $1::int AS n', [4]);
    expect((await prepared(other)).map((statement) => statement.name)).toEqual([statements[0]!.name]);
  });

  it('prepares the statements of a transaction too, and leaves statements without parameters unnamed', async () => {
    const client = onOneConnection();
    await client.query('CREATE TEMPORARY TABLE numbers (n int)');
    await client.query('INSERT INTO numbers VALUES (1)');
    const read = await client.transaction(async (transaction) => {
      await transaction.query('INSERT INTO numbers VALUES ($1)', [2]);
      return transaction.query('SELECT n FROM numbers ORDER BY n');
    });
    expect(read.rows).toEqual([{ n: 1 }, { n: 2 }]);
    expect((await prepared(client)).map((statement) => statement.statement)).toEqual([
      'INSERT INTO numbers VALUES ($1)',
    ]);
  });

  it('prepares nothing with preparedStatements: false', async () => {
    const client = onOneConnection({ preparedStatements: false });
    expect((await client.query('SELECT $1::int AS n', [7])).rows).toEqual([{ n: 7 }]);
    expect(await prepared(client)).toEqual([]);
  });

  it('names at most 500 texts, and runs any further ones unnamed', async () => {
    const client = onOneConnection();
    for (let index = 0; index < 510; index++) {
      expect((await client.query(`SELECT $1::int + ${index} AS n`, [1])).rows).toEqual([{ n: index + 1 }]);
    }
    expect(await prepared(client)).toHaveLength(500);
  });
});
