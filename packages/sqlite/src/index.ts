export {
  openSqliteDatabase,
  type SqliteDatabase,
  type SqliteDatabaseOptions,
  type SqliteModuleSchema,
} from './open-sqlite-database.js';
export { sqliteMigrations, type SqliteMigration } from './migrations.js';
export { toStoreError } from './to-store-error.js';
export { createSqliteSessionStore } from './sqlite-session-store.js';
export { createSqliteSessionLookup, type SqliteSessionLookupOptions } from './sqlite-session-lookup.js';
export {
  createSqliteUserDirectory,
  type SqliteUserDirectory,
  type SqliteUserDirectoryOptions,
} from './sqlite-user-directory.js';
export { createSqliteChatStore } from './sqlite-chat-store.js';
export { createSqliteApprovalStore } from './sqlite-approval-store.js';
export { createSqliteAccountTokenStore } from './sqlite-account-token-store.js';
export { createSqliteAuditStore } from './sqlite-audit-store.js';
export { createSqliteInvitationStore } from './sqlite-invitation-store.js';
export { createSqliteRolePolicyStore } from './sqlite-role-policy-store.js';
export { createSqliteOrganizationStore } from './sqlite-organization-store.js';
export { createSqliteStores, type SqliteStores, type SqliteStoresOptions } from './create-sqlite-stores.js';
