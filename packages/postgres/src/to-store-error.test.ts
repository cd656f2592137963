import { createServer, type AddressInfo } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import { DeskpilotError, isDeskpilotError } from '@deskpilot/core';
import { makeSessionRecord } from '@deskpilot/core/testing';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPglite } from './from-pglite.js';
import { fromPgPool } from './from-pg-pool.js';
import { migrate } from './migrate.js';
import { createPostgresSessionStore } from './postgres-session-store.js';
import { databaseUrl, onPostgres, openTestSchema } from './test-database.test-support.js';
import { toStoreError } from './to-store-error.js';

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

const record = makeSessionRecord;

/** What a call rejected with. */
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('the call should have failed'),
    (error: unknown) => error,
  );

const expectUnavailable = (error: unknown) => {
  expect(isDeskpilotError(error, 'store_unavailable')).toBe(true);
  expect(error).toMatchObject({ status: 503, detail: 'The database is unavailable.' });
  expect((error as Error).cause).toBeInstanceOf(Error);
};

/** A port nothing listens on. */
const closedPort = async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};

describe('toStoreError', () => {
  it.each([
    ['ECONNREFUSED', 'connection refused'],
    ['ECONNRESET', 'connection reset'],
    ['ENOSPC', 'embedded database disk full'],
    ['08006', 'connection failure'],
    ['25006', 'read-only transaction'],
    ['53100', 'disk full'],
    ['53300', 'too many connections'],
    ['57P01', 'admin shutdown'],
    ['57014', 'statement timeout'],
    ['58030', 'I/O error'],
    ['XX001', 'data corrupted'],
    ['3D000', 'no such database'],
    ['28P01', 'bad deployment password'],
    ['40001', 'serialization failure'],
  ])('maps %s (%s) to store_unavailable', (code) => {
    expectUnavailable(toStoreError(withCode(code)));
  });

  it('maps the file errors emscripten throws inside PGlite (plain objects, not Errors) to store_unavailable', () => {
    const thrown = { name: 'ErrnoError', errno: 51 };
    const error = toStoreError(thrown);
    expect(isDeskpilotError(error, 'store_unavailable')).toBe(true);
    expect((error as Error).cause).toBe(thrown);
  });

  it.each([
    'Connection terminated unexpectedly',
    'Query read timeout',
    'timeout exceeded when trying to connect',
    'PGlite is closed',
  ])('maps the driver message %j to store_unavailable', (message) => {
    expectUnavailable(toStoreError(new Error(message)));
  });

  it.each([
    ['23505', 'duplicate key'],
    ['23503', 'foreign key'],
    ['22P02', 'invalid text representation'],
    ['42601', 'syntax error'],
  ])('leaves %s (%s), the caller’s fault, unchanged', (code) => {
    const error = withCode(code, 'connection-shaped words in a data error are not an outage');
    expect(toStoreError(error)).toBe(error);
  });

  it('leaves other errors, and errors already mapped, unchanged', () => {
    const plain = new TypeError('bad input');
    const mapped = new DeskpilotError('store_unavailable');
    expect(toStoreError(plain)).toBe(plain);
    expect(toStoreError(mapped)).toBe(mapped);
    expect(toStoreError('a string')).toBe('a string');
  });
});

describe('store errors on a pg pool', () => {
  it('answers store_unavailable when nothing listens on the port, for queries and transactions', async () => {
    const client = fromPgPool(
      new Pool({ connectionString: `postgres://postgres@127.0.0.1:${await closedPort()}/test` }),
    );
    const store = createPostgresSessionStore(client);
    try {
      expectUnavailable(await failure(store.get('any')));
      expectUnavailable(await failure(store.replace('any', 1, record())));
    } finally {
      await client.close();
    }
  });
});

describe('store errors on PGlite', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await PGlite.create();
    await migrate(fromPglite(db));
  }, 60_000);
  afterAll(() => db?.close());

  it('answers store_unavailable for a read-only database, and keeps duplicates ordinary errors', async () => {
    const client = fromPglite(db);
    const store = createPostgresSessionStore(client);
    const created = record();
    await store.create(created);
    expect(isDeskpilotError(await failure(store.create(created)))).toBe(false);
    await db.exec('SET default_transaction_read_only = on');
    try {
      expectUnavailable(await failure(store.create(record())));
      expectUnavailable(await failure(store.replace(created.id, 1, record())));
      expect(await store.get(created.id)).toEqual(created);
    } finally {
      await db.exec('SET default_transaction_read_only = off');
    }
  });

  it('answers store_unavailable once the database is closed', async () => {
    const closed = await PGlite.create();
    await closed.close();
    const store = createPostgresSessionStore(fromPglite(closed));
    expectUnavailable(await failure(store.get('any')));
  }, 60_000);

  it('rolls a transaction back on any error: nothing half-written', async () => {
    const client = fromPglite(db);
    const created = record();
    const boom = new Error('boom');
    const error = await failure(
      client.transaction(async (transaction) => {
        await transaction.query(
          `INSERT INTO deskpilot_sessions (id, secret_hash, user_id, project_key, client_id, created_at, expires_at, idle_expires_at, version)
          VALUES ($1, 'digest', 'user-1', 'p', 'c', 1, 2, 2, 1)`,
          [created.id],
        );
        throw boom;
      }),
    );
    expect(error).toBe(boom);
    expect(await createPostgresSessionStore(client).get(created.id)).toBeNull();
  });
});

describe.skipIf(!databaseUrl)(`store errors ${onPostgres}`, () => {
  let schema: Awaited<ReturnType<typeof openTestSchema>>;
  beforeAll(async () => {
    schema = await openTestSchema();
  });
  afterAll(() => schema?.close());

  it('answers store_unavailable for a read-only database (a replica, a database in recovery)', async () => {
    const client = fromPgPool(
      schema.pool({ options: `-c search_path=${schema.schema} -c default_transaction_read_only=on` }),
    );
    const store = createPostgresSessionStore(client);
    expectUnavailable(await failure(store.create(record())));
    expectUnavailable(await failure(store.replace('any', 1, record())));
    expect(await store.get('any')).toBeNull();
  });

  it('answers store_unavailable for a database that does not exist', async () => {
    const url = new URL(databaseUrl!);
    url.pathname = '/deskpilot_no_such_database';
    const client = fromPgPool(new Pool({ connectionString: url.href }));
    try {
      expectUnavailable(await failure(createPostgresSessionStore(client).get('any')));
    } finally {
      await client.close();
    }
  });

  it('answers store_unavailable when the server terminates the connection mid-transaction, then recovers', async () => {
    const pool = schema.pool({ max: 1 });
    const client = fromPgPool(pool);
    const created = record();
    const running = client.transaction(async (transaction) => {
      await transaction.query(
        `INSERT INTO deskpilot_sessions (id, secret_hash, user_id, project_key, client_id, created_at, expires_at, idle_expires_at, version)
        VALUES ($1, 'digest', 'user-1', 'p', 'c', 1, 2, 2, 1)`,
        [created.id],
      );
      await transaction.query('SELECT pg_sleep(30)');
    });
    // Handled from now on: it may fail while the poll below is still waiting for its next try.
    const outcome = failure(running);
    // Terminate the backend running the sleep, as an administrator or a failover would.
    await expect
      .poll(
        async () =>
          (
            await schema.client.query(
              `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'`,
            )
          ).rowCount,
        {
          timeout: 5_000,
        },
      )
      .toBe(1);
    expectUnavailable(await outcome);
    const store = createPostgresSessionStore(client);
    expect(await store.get(created.id)).toBeNull();
    await store.create(created);
    expect(await store.get(created.id)).toEqual(created);
  });

  it('keeps a duplicate id an ordinary error', async () => {
    const store = createPostgresSessionStore(schema.client);
    const created = record();
    await store.create(created);
    const error = await failure(store.create(created));
    expect(error).toMatchObject({ code: '23505' });
    expect(isDeskpilotError(error)).toBe(false);
  });
});
