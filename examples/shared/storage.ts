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
  IdentityLinkStore,
  NewUser,
  PasskeyStore,
  SessionLookup,
  SessionStore,
  UserDirectory,
} from '@deskpilot/core/session';
import type { InvitationStore, OrganizationStore, RolePolicyStore, TeamDirectory } from '@deskpilot/core/team';

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

/** A service's open storage. */
export interface Storage {
  kind: 'postgres' | 'sqlite' | 'pglite';
  sessionStore: SessionStore;
  userDirectory: UserDirectory & TeamDirectory & { addUser(user: NewUser): Promise<Account> };
  sessionLookup: SessionLookup;
  chatStore: ChatStore;
  approvalStore: ApprovalStore;
  /** One-time links (password reset, email verification). */
  accountTokenStore: AccountTokenStore;
  /** Passkeys (WebAuthn credentials). */
  passkeyStore: PasskeyStore;
  /** Single sign-on's links of provider identities to users. */
  identityLinkStore: IdentityLinkStore;
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
  /** For the start-up line: `SQLite in .data/deskpilot.sqlite`. */
  label: string;
  checkReady(): Promise<void>;
  close(): Promise<void>;
}

/** The embedded SQLite database's file in the data root. */
export const sqliteFileName = 'deskpilot.sqlite';

/** Opens the storage `service` uses under `config`. */
export async function openStorage(config: StorageConfig, service: 'session' | 'chat'): Promise<Storage> {
  if (!config.DATABASE_URL && config.EMBEDDED_DATABASE === 'sqlite') {
    const { openSqliteDatabase, createSqliteStores } = await import('@deskpilot/sqlite');
    const file = join(config.DATA_DIR, sqliteFileName);
    const database = await openSqliteDatabase({ file });
    return {
      kind: 'sqlite',
      ...createSqliteStores(database),
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
  });
  // PGlite has one writer, this process, so reads may be cached; a shared Postgres may not.
  const stores = createPostgresStores(database.client, { cache: database.kind === 'pglite' });
  return {
    kind: database.kind,
    ...stores,
    sharedSessions: database.kind === 'postgres' ? createPostgresSessionStore(database.client) : undefined,
    label: database.kind === 'pglite' ? `PGlite in ${dataDir}` : 'Postgres (DATABASE_URL)',
    checkReady: () => database.checkReady(),
    close: () => database.close(),
  };
}
