import type { ApprovalStore, ChatStore } from '@deskpilot/core/chat';
import {
  createSessionLookup,
  type AccountTokenStore,
  type AuditStore,
  type PasswordHashOptions,
  type SessionLookup,
  type SessionStore,
} from '@deskpilot/core/session';
import { type InvitationStore, type RolePolicyStore, type OrganizationStore } from '@deskpilot/core/team';
import { createPostgresAccountTokenStore } from './postgres-account-token-store.js';
import { createPostgresAuditStore } from './postgres-audit-store.js';
import { createPostgresInvitationStore } from './postgres-invitation-store.js';
import { createPostgresRolePolicyStore } from './postgres-role-policy-store.js';
import { createPostgresOrganizationStore } from './postgres-organization-store.js';
import { createPostgresApprovalStore } from './postgres-approval-store.js';
import { createPostgresChatStore } from './postgres-chat-store.js';
import { createPostgresSessionLookup } from './postgres-session-lookup.js';
import { createPostgresSessionStore } from './postgres-session-store.js';
import { createPostgresUserDirectory, type PostgresUserDirectory } from './postgres-user-directory.js';
import type { ReadCacheOptions } from './read-cache.js';
import type { SqlClient } from './sql-client.js';

/** Options of {@link createPostgresStores}. */
export interface PostgresStoresOptions {
  /**
   * In-process read cache for sessions and accounts (the per-request reads). Only when this process
   * is the database's ONLY writer: turn it on for PGlite, leave it off for a shared Postgres.
   * @default false
   */
  cache?: boolean | ReadCacheOptions;
  /** scrypt parameters of the user directory. */
  passwordHash?: PasswordHashOptions;
  /** Clock for the session cache's expiry check. @default Date.now */
  now?: () => number;
  /** Most sessions whose idle expiry one statement renews. @default 5000 */
  maxRenewBatch?: number;
  /** How long session renewals are gathered before they are written (reads never wait). @default 200 */
  renewWindowMs?: number;
}

/**
 * Every store of the kernel, the chat and the modules in core on one database. The modules in packages
 * of their own bring theirs (`@deskpilot/passkeys/postgres`, `@deskpilot/sso/postgres`).
 */
export interface PostgresStores {
  sessionStore: SessionStore;
  userDirectory: PostgresUserDirectory;
  /**
   * The session and its account for `createSessionService({ lookup })`: one statement per request
   * without the cache, the two caches with it.
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
 * Creates every store on one {@link SqlClient} (run {@link migrate} first; `openDatabase` does).
 *
 * @example
 * const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: './.data/session' });
 * const stores = createPostgresStores(db.client, { cache: db.kind === 'pglite' });
 * const sessions = createSessionService({ store: stores.sessionStore, directory: stores.userDirectory, lookup: stores.sessionLookup });
 */
export function createPostgresStores(client: SqlClient, options: PostgresStoresOptions = {}): PostgresStores {
  const sessionStore = createPostgresSessionStore(client, {
    cache: options.cache,
    now: options.now,
    maxRenewBatch: options.maxRenewBatch,
    renewWindowMs: options.renewWindowMs,
  });
  const userDirectory = createPostgresUserDirectory(client, {
    cache: options.cache,
    passwordHash: options.passwordHash,
  });
  return {
    sessionStore,
    userDirectory,
    // Cached reads cost no statement, so the cached stores answer better than one joined statement.
    sessionLookup: options.cache
      ? createSessionLookup({ store: sessionStore, directory: userDirectory })
      : createPostgresSessionLookup(client),
    chatStore: createPostgresChatStore(client),
    approvalStore: createPostgresApprovalStore(client),
    accountTokenStore: createPostgresAccountTokenStore(client),
    auditStore: createPostgresAuditStore(client),
    invitationStore: createPostgresInvitationStore(client),
    rolePolicyStore: createPostgresRolePolicyStore(client),
    organizationStore: createPostgresOrganizationStore(client),
  };
}
