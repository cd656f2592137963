// Where a reference service keeps its data: Postgres when DATABASE_URL is set, else the embedded
// database in DATA_DIR — SQLite (Node's built-in node:sqlite, one file both services share) unless
// EMBEDDED_DATABASE=pglite (Postgres in WebAssembly, one directory per service). Each driver is loaded
// only when it is used: `pg` and PGlite cost an idle process memory it would not otherwise spend.
import { join } from 'node:path';
import type { ApprovalStore, ChatStore } from '@deskpilot/core/chat';
import type {
  Account,
  AccountTokenStore,
  AuditStore,
  NewUser,
  SessionLookup,
  SessionStore,
  UserDirectory,
} from '@deskpilot/core/session';
import type { InvitationStore, OrganizationStore, RolePolicyStore, TeamDirectory } from '@deskpilot/core/team';
import type { ModuleSchema, SqlClient } from '@deskpilot/postgres';
import type { SqliteDatabase, SqliteModuleSchema } from '@deskpilot/sqlite';

/** The storage variables a service reads (see `storageVariables` in environment.ts). */
export interface StorageConfig {
  DATABASE_URL?: string | undefined;
  DATABASE_SCHEMA?: string | undefined;
  DATABASE_CONNECT_TIMEOUT_MS: number;
  DATABASE_QUERY_TIMEOUT_MS: number;
  DATA_DIR: string;
  EMBEDDED_DATABASE: 'sqlite' | 'pglite';
  PGLITE_SHARED_BUFFERS: string;
}

/**
 * A feature module's store on each engine, from the module's package (`@deskpilot/passkeys/sqlite`,
 * `/postgres`): its schema is migrated when the storage opens, and `open` makes the store on it.
 */
export interface ModuleStorage<T> {
  sqlite: { schema: SqliteModuleSchema; open(database: SqliteDatabase): T };
  postgres: { schema: ModuleSchema; open(client: SqlClient): T };
}

/** A service's open storage. */
export interface Storage<Modules extends Record<string, unknown> = Record<never, never>> {
  kind: 'postgres' | 'sqlite' | 'pglite';
  sessionStore: SessionStore;
  userDirectory: UserDirectory & TeamDirectory & { addUser(user: NewUser): Promise<Account> };
  sessionLookup: SessionLookup;
  chatStore: ChatStore;
  approvalStore: ApprovalStore;
  /** One-time links (password reset, email verification). */
  accountTokenStore: AccountTokenStore;
  /** The audit trail: append-only, one hash chain per project. */
  auditStore: AuditStore;
  /** Invitations of a project's admins. */
  invitationStore: InvitationStore;
  /** Each project's role policy. */
  rolePolicyStore: RolePolicyStore;
  /** Organisations above projects, and their admins. */
  organizationStore: OrganizationStore;
  /**
   * The session store read uncached, on Postgres: the services share one database, so a chat grant can
   * end with its session. Not on an embedded database, which a service run alone may not share (a
   * grant then lives until it expires, at most 10 minutes).
   */
  sharedSessions: SessionStore | undefined;
  /** The stores of the modules `openStorage` was given, by the names it was given them under. */
  modules: Modules;
  /** For the start-up line: `SQLite in .data/deskpilot.sqlite`. */
  label: string;
  checkReady(): Promise<void>;
  close(): Promise<void>;
}

/** The embedded SQLite database's file in the data root. */
export const sqliteFileName = 'deskpilot.sqlite';

/** Opens the storage `service` uses under `config`, with the stores of the feature `modules` given. */
export async function openStorage<Modules extends Record<string, unknown> = Record<never, never>>(
  config: StorageConfig,
  service: 'session' | 'chat',
  modules: { [Name in keyof Modules]: ModuleStorage<Modules[Name]> } = {} as never,
): Promise<Storage<Modules>> {
  const entries = Object.entries(modules) as Array<[string, ModuleStorage<unknown>]>;
  const openModules = <Engine extends 'sqlite' | 'postgres'>(
    engine: Engine,
    handle: Parameters<ModuleStorage<unknown>[Engine]['open']>[0],
  ) =>
    Object.fromEntries(
      entries.map(([name, storage]) => [name, (storage[engine].open as (on: typeof handle) => unknown)(handle)]),
    ) as Modules;
  if (!config.DATABASE_URL && config.EMBEDDED_DATABASE === 'sqlite') {
    const { openSqliteDatabase, createSqliteStores } = await import('@deskpilot/sqlite');
    const file = join(config.DATA_DIR, sqliteFileName);
    const database = await openSqliteDatabase({ file, modules: entries.map(([, storage]) => storage.sqlite.schema) });
    return {
      kind: 'sqlite',
      ...createSqliteStores(database),
      modules: openModules('sqlite', database),
      sharedSessions: undefined,
      label: `SQLite in ${file}`,
      checkReady: () => database.checkReady(),
      close: () => database.close(),
    };
  }
  const { openDatabase, createPostgresStores, createPostgresSessionStore } = await import('@deskpilot/postgres');
  const dataDir = join(config.DATA_DIR, service);
  const database = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    schema: config.DATABASE_SCHEMA,
    dataDir,
    pgliteSettings: { shared_buffers: config.PGLITE_SHARED_BUFFERS },
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS,
    modules: entries.map(([, storage]) => storage.postgres.schema),
  });
  // PGlite has one writer, this process, so reads may be cached; a shared Postgres may not.
  const stores = createPostgresStores(database.client, { cache: database.kind === 'pglite' });
  return {
    kind: database.kind,
    ...stores,
    modules: openModules('postgres', database.client),
    sharedSessions: database.kind === 'postgres' ? createPostgresSessionStore(database.client) : undefined,
    label: database.kind === 'pglite' ? `PGlite in ${dataDir}` : 'Postgres (DATABASE_URL)',
    checkReady: () => database.checkReady(),
    close: () => database.close(),
  };
}
