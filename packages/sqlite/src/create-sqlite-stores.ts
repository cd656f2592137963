import type { ApprovalStore, ChatStore } from '@deskpilot/core/chat';
import type {
  AccountTokenStore,
  AuditStore,
  PasswordHashOptions,
  SessionLookup,
  SessionStore,
} from '@deskpilot/core/session';
import type { InvitationStore, RolePolicyStore, OrganizationStore } from '@deskpilot/core/team';
import { createSqliteAuditStore } from './sqlite-audit-store.js';
import { createSqliteInvitationStore } from './sqlite-invitation-store.js';
import { createSqliteRolePolicyStore } from './sqlite-role-policy-store.js';
import { createSqliteOrganizationStore } from './sqlite-organization-store.js';
import { createSqliteAccountTokenStore } from './sqlite-account-token-store.js';
import type { SqliteDatabase } from './open-sqlite-database.js';
import { createSqliteApprovalStore } from './sqlite-approval-store.js';
import { createSqliteChatStore } from './sqlite-chat-store.js';
import { createSqliteSessionLookup } from './sqlite-session-lookup.js';
import { createSqliteSessionStore } from './sqlite-session-store.js';
import { createSqliteUserDirectory, type SqliteUserDirectory } from './sqlite-user-directory.js';

/** Options of {@link createSqliteStores}. */
export interface SqliteStoresOptions {
  /** scrypt parameters of the user directory. */
  passwordHash?: PasswordHashOptions;
}

/**
 * Every store of the kernel, the chat and the modules in core on one SQLite database. The modules in
 * packages of their own bring theirs (`@deskpilot/passkeys/sqlite`, `@deskpilot/sso/sqlite`).
 */
export interface SqliteStores {
  sessionStore: SessionStore;
  userDirectory: SqliteUserDirectory;
  /**
   * The session and its account for `createSessionService({ lookup })`: one statement, and the answer
   * kept until anything in the database changes (see {@link createSqliteSessionLookup}).
   */
  sessionLookup: SessionLookup;
  chatStore: ChatStore;
  approvalStore: ApprovalStore;
  /** One-time links of the session service's `recovery` (password reset, email verification). */
  accountTokenStore: AccountTokenStore;
  /** The audit trail: append-only, one hash chain per project. */
  auditStore: AuditStore;
  /** Invitations of the session service's `team` (its `directory` is `userDirectory`). */
  invitationStore: InvitationStore;
  /** Each project's role policy (role → capability flags), for the session service's `team`. */
  rolePolicyStore: RolePolicyStore;
  /** Organisations above projects and their admins, for the session service's `team`. */
  organizationStore: OrganizationStore;
}

/**
 * Creates every store on one {@link SqliteDatabase}. Only the session lookup keeps answers in memory,
 * and only until anything in the database changes: another process sharing the file, or another
 * handle in this one, is seen at once.
 *
 * @example
 * const database = await openSqliteDatabase({ file: './.data/deskpilot.sqlite' });
 * const stores = createSqliteStores(database);
 * const sessions = createSessionService({ store: stores.sessionStore, directory: stores.userDirectory, lookup: stores.sessionLookup });
 */
export function createSqliteStores(database: SqliteDatabase, options: SqliteStoresOptions = {}): SqliteStores {
  const sessionStore = createSqliteSessionStore(database);
  const userDirectory = createSqliteUserDirectory(database, { passwordHash: options.passwordHash });
  return {
    sessionStore,
    userDirectory,
    sessionLookup: createSqliteSessionLookup(database),
    chatStore: createSqliteChatStore(database),
    approvalStore: createSqliteApprovalStore(database),
    accountTokenStore: createSqliteAccountTokenStore(database),
    auditStore: createSqliteAuditStore(database),
    invitationStore: createSqliteInvitationStore(database),
    rolePolicyStore: createSqliteRolePolicyStore(database),
    organizationStore: createSqliteOrganizationStore(database),
  };
}
