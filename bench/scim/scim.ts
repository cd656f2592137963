// SCIM at 10,000 users: user create and list, per request, on SQLite and Postgres — an organisation
// whose directory holds 10,000 users beside one that holds none, in one run, through the module's own
// endpoint over the stores the reference server uses. What must not grow with the data: the time and
// the SQL statements of a request.
//   node bench/scim/scim.ts            the full run (needs Postgres at 127.0.0.1, or DATABASE_URL)
//   node bench/scim/scim.ts --quick    a brief run, to check that the harness works
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createSessionService } from '@deskpilot/core/session';
import { createTeamModule } from '@deskpilot/core/team';
import { createPostgresStores } from '@deskpilot/postgres';
import { counter, countingSql } from '../shared/counting-sql.ts';
import { openTestDatabase } from '@deskpilot/postgres/testing';
import { createScimModule, type ScimModule, type ScimStore } from '@deskpilot/scim';
import { createPostgresScimStore, scimSchema } from '@deskpilot/scim/postgres';
import { createSqliteScimStore, scimSchema as sqliteScimSchema } from '@deskpilot/scim/sqlite';
import { createSqliteStores, openSqliteDatabase, type SqliteDatabase } from '@deskpilot/sqlite';

const quick = process.argv.includes('--quick');
const bigUsers = quick ? 500 : 10_000;
const measured = quick ? 50 : 500;
/** Rounds per row: each measures both sides, in alternating order; the figure is the median round. */
const rounds = quick ? 1 : 5;
/** The small directory's users before anything is measured: a full page of 100, and then some. */
const smallUsers = 200;
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
if (new URL(databaseUrl).hostname !== '127.0.0.1') throw new Error('DATABASE_URL must point at 127.0.0.1.');

function countingSqlite(database: SqliteDatabase): SqliteDatabase {
  const statement = database.statement.bind(database);
  return Object.assign(Object.create(database) as SqliteDatabase, {
    statement(sql: string) {
      const prepared = statement(sql);
      return new Proxy(prepared, {
        get(target, key) {
          const value = Reflect.get(target, key, target) as unknown;
          if (typeof value !== 'function') return value;
          if (key === 'run' || key === 'get' || key === 'all' || key === 'iterate')
            return (...args: unknown[]) => {
              counter.statements += 1;
              return (value as (...values: unknown[]) => unknown).apply(target, args);
            };
          return (value as (...values: unknown[]) => unknown).bind(target);
        },
      });
    },
    transaction: database.transaction.bind(database),
    run: database.run.bind(database),
  });
}

interface Engine {
  name: string;
  open(): Promise<{
    stores: ReturnType<typeof createSqliteStores> | ReturnType<typeof createPostgresStores>;
    scim: ScimStore;
    /** After the seeding: what the database's own maintenance does to a table that grew (autovacuum). */
    settle(): Promise<void>;
    close(): Promise<void>;
  }>;
}

const engines: Engine[] = [
  {
    name: 'SQLite',
    async open() {
      const folder = mkdtempSync(join(tmpdir(), 'deskpilot-scim-bench-'));
      const raw = await openSqliteDatabase({ file: join(folder, 'bench.sqlite'), modules: [sqliteScimSchema] });
      const database = countingSqlite(raw);
      return {
        stores: createSqliteStores(database),
        scim: createSqliteScimStore(database),
        settle: async () => void raw.run(() => raw.statement('ANALYZE').run()),
        close: async () => {
          raw.close();
          rmSync(folder, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'Postgres',
    async open() {
      const database = await openTestDatabase({ databaseUrl, modules: [scimSchema] });
      const client = countingSql(database.client);
      return {
        stores: createPostgresStores(client),
        scim: createPostgresScimStore(client),
        // The visibility map autovacuum keeps: what lets a deep page's index walk skip the table.
        settle: async () => void (await database.client.query('VACUUM (ANALYZE) deskpilot_scim_users')),
        close: () => database.close(),
      };
    },
  },
];

interface Row {
  engine: string;
  what: string;
  big: { microseconds: number; statements: number };
  empty: { microseconds: number; statements: number };
}

/** Runs `request` `count` times in turn: the time and the statements per request. */
async function measure(count: number, request: (index: number) => Promise<Response>) {
  const statements = counter.statements;
  const started = process.hrtime.bigint();
  for (let index = 0; index < count; index += 1) {
    const response = await request(index);
    if (response.status >= 300) throw new Error(`SCIM answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  }
  const elapsed = Number(process.hrtime.bigint() - started) / 1000;
  return { microseconds: elapsed / count, statements: (counter.statements - statements) / count };
}

async function benchEngine(engine: Engine): Promise<Row[]> {
  const { stores, scim: store, settle, close } = await engine.open();
  try {
    const domains: Record<string, string[]> = { big: ['big.example'], empty: ['empty.example'] };
    for (const organization of ['big', 'empty'])
      await stores.organizationStore.addProject(organization, `${organization}-p`);
    const service = createSessionService({
      store: stores.sessionStore,
      directory: stores.userDirectory,
      audit: stores.auditStore,
      modules: [
        createTeamModule({
          directory: stores.userDirectory,
          invitations: stores.invitationStore,
          organizations: stores.organizationStore,
        }),
        createScimModule({
          store,
          directory: stores.userDirectory,
          domains: (organization) => domains[organization] ?? [],
          groupRoles: (organization) => [
            { group: 'Agents', projectKey: `${organization}-p`, clientId: 'c', role: 'agent' },
          ],
          rateLimit: { limit: 1_000_000, windowMs: 60_000 },
          baseUrl: 'http://bench.test/scim/v2',
        }),
      ],
    });
    const scim = service.modules.scim as ScimModule;
    const tokens: Record<string, string> = {};
    for (const organization of ['big', 'empty']) {
      const secret = `scim_bench_${organization}_token_of_enough_length`;
      const { createHash } = await import('node:crypto');
      await store.addToken(
        {
          id: `scimtok_${organization}`,
          organization,
          hash: createHash('sha256').update(secret).digest('base64url'),
          name: organization,
          createdAt: Date.now(),
          lastUsedAt: null,
        },
        2,
      );
      tokens[organization] = secret;
    }
    const call = (organization: string, method: string, path: string, body?: unknown) =>
      scim.fetch(
        new Request(`http://bench.test/scim/v2${path}`, {
          method,
          headers: {
            authorization: `Bearer ${tokens[organization]}`,
            ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      );
    const user = (organization: string, name: string) => ({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: `${name}@${organization}.example`,
      externalId: `ext-${name}`,
      name: { givenName: name, familyName: 'Bench' },
      emails: [{ primary: true, type: 'work', value: `${name}@${organization}.example` }],
      active: true,
    });
    // The first create hashes the password nobody knows, once per process: not measured.
    for (let index = 0; index < smallUsers; index += 1)
      await (await call('empty', 'POST', '/Users', user('empty', `u${index}`))).arrayBuffer();
    const seeding = Date.now();
    for (let index = 0; index < bigUsers; index += 1)
      await (await call('big', 'POST', '/Users', user('big', `u${index}`))).arrayBuffer();
    console.error(`${engine.name}: ${bigUsers} users created in ${Math.round((Date.now() - seeding) / 1000)} s`);
    await settle();
    const rows: Row[] = [];
    const side = async (what: string, request: (organization: string, index: number) => Promise<Response>) => {
      // Each round measures both sides, in alternating order, so that neither has the machine's quieter
      // moments to itself; the figure is the median round's. Indexes go on from round to round.
      const perRound = Math.ceil(measured / rounds);
      const samples: Record<'big' | 'empty', Array<{ microseconds: number; statements: number }>> = {
        big: [],
        empty: [],
      };
      for (let round = 0; round < rounds; round += 1)
        for (const organization of round % 2 === 0 ? (['empty', 'big'] as const) : (['big', 'empty'] as const))
          samples[organization].push(
            await measure(perRound, (index) => request(organization, round * perRound + index)),
          );
      const median = (list: Array<{ microseconds: number; statements: number }>) =>
        [...list].sort((a, b) => a.microseconds - b.microseconds)[Math.floor(list.length / 2)]!;
      rows.push({ engine: engine.name, what, big: median(samples.big), empty: median(samples.empty) });
    };
    await side('create a user', (organization, index) =>
      call(organization, 'POST', '/Users', user(organization, `new${index}`)),
    );
    await side('find by userName (Okta, Entra ID)', (organization, index) =>
      call(
        organization,
        'GET',
        `/Users?filter=${encodeURIComponent(`userName eq "u${index}@${organization}.example"`)}`,
      ),
    );
    await side('list, first page of 100', (organization) => call(organization, 'GET', '/Users?startIndex=1&count=100'));
    await side('list, a page of 100 near the end', (organization) =>
      call(
        organization,
        'GET',
        `/Users?startIndex=${(organization === 'big' ? bigUsers : smallUsers) - 100}&count=100`,
      ),
    );
    return rows;
  } finally {
    await close();
  }
}

const format = (value: number, digits = 0) => value.toFixed(digits);
const started = Date.now();
const rows: Row[] = [];
for (const engine of engines) rows.push(...(await benchEngine(engine)));
console.log(
  [
    `## SCIM at ${bigUsers.toLocaleString('en')} users — ${new Date().toISOString().slice(0, 10)}${quick ? ' (quick run: figures not meaningful)' : ''}`,
    '',
    `Machine: ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}. ${measured} requests per row and side, one at a time, in ${rounds} rounds alternating the sides (the median round's figures), through the module's endpoint, after the seeding's \`VACUUM (ANALYZE)\` (Postgres) or \`ANALYZE\` (SQLite), as the database's own maintenance would; the small directory holds ${smallUsers} users, then ${smallUsers + measured} once the creates are measured; total ${Math.round((Date.now() - started) / 1000)} s.`,
    '',
    `| Store | Request | µs, ${bigUsers.toLocaleString('en')} users | µs, small directory | big ÷ small | statements, ${bigUsers.toLocaleString('en')} users | statements, small |`,
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.engine} | ${row.what} | ${format(row.big.microseconds)} | ${format(row.empty.microseconds)} | ${format(row.big.microseconds / row.empty.microseconds, 2)}× | ${format(row.big.statements, 1)} | ${format(row.empty.statements, 1)} |`,
    ),
  ].join('\n'),
);
