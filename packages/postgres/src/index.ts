export type { SqlClient, SqlExecutor, SqlResult, SqlRow } from './sql-client.js';
export { fromPgPool, type FromPgPoolOptions, type PgPoolClientLike, type PgPoolLike } from './from-pg-pool.js';
export { fromPglite, type PgliteLike } from './from-pglite.js';
export { toStoreError } from './to-store-error.js';
export { migrate, type MigrateOptions, type MigrateResult } from './migrate.js';
export { checkDatabaseReady, type CheckDatabaseReadyOptions } from './check-database-ready.js';
export type { ModuleSchema } from './module-schema.js';
export { migrations, type Migration } from './migrations.js';
export { migrationFileName, migrationFiles, migrationSql, moduleMigrationFiles } from './migration-sql.js';
export { createPostgresSessionStore, type PostgresSessionStoreOptions } from './postgres-session-store.js';
export {
  createPostgresUserDirectory,
  type PostgresUserDirectory,
  type PostgresUserDirectoryOptions,
} from './postgres-user-directory.js';
export { createPostgresSessionLookup, type PostgresSessionLookupOptions } from './postgres-session-lookup.js';
export { createPostgresChatStore } from './postgres-chat-store.js';
export { createPostgresApprovalStore } from './postgres-approval-store.js';
export { createPostgresAccountTokenStore } from './postgres-account-token-store.js';
export { createPostgresAuditStore } from './postgres-audit-store.js';
export { createPostgresInvitationStore } from './postgres-invitation-store.js';
export { createPostgresRolePolicyStore } from './postgres-role-policy-store.js';
export { createPostgresOrganizationStore } from './postgres-organization-store.js';
export { createPostgresStores, type PostgresStores, type PostgresStoresOptions } from './create-postgres-stores.js';
export { openDatabase, type Database, type OpenDatabaseOptions } from './open-database.js';
export {
  DataDirectoryLockedError,
  lockDataDirectory,
  lockFileName,
  type DataDirectoryHolder,
  type DataDirectoryLock,
} from './lock-data-directory.js';
export type { ReadCacheOptions } from './read-cache.js';
