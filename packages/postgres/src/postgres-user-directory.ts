import { randomUUID } from 'node:crypto';
import {
  hashPassword,
  isPasswordHash,
  normalizeEmail,
  type Account,
  type NewUser,
  type PasswordHashOptions,
  type AuditEvent,
  type Membership,
  type UserDirectory,
} from '@deskpilot/core/session';
import {
  applyMembershipChange,
  type MembershipChange,
  type MembershipChangeResult,
  type TeamDirectory,
} from '@deskpilot/core/team';
import { appendAuditRecord } from './postgres-audit-store.js';
import { createReadCache, noReadCache, type ReadCache, type ReadCacheOptions } from './read-cache.js';
import { accountFromRow, canBeStored, freezeAccount, readStoredRow } from '@deskpilot/core/storage';
import type { SqlClient, SqlExecutor } from './sql-client.js';

/** Options of {@link createPostgresUserDirectory}. */
export interface PostgresUserDirectoryOptions {
  /**
   * scrypt parameters of the hash of a user added with a plain password; give the session service
   * (which upgrades hashes and checks the decoy) the same ones.
   * @default N=2^17, r=8, p=1 (those of `hashPassword`)
   */
  passwordHash?: PasswordHashOptions;
  /**
   * Keep accounts this process read or wrote in memory, updated by every `addUser` it makes. Only
   * correct when this process is the database's ONLY writer (PGlite, or a single replica).
   * @default false
   */
  cache?: boolean | ReadCacheOptions;
}

/** A {@link UserDirectory} on Postgres or PGlite, whose memberships a team administers ({@link TeamDirectory}). */
export interface PostgresUserDirectory extends UserDirectory, TeamDirectory {
  /**
   * Adds or replaces, by email, a user; resolves to the stored account. Re-adding an email without an
   * `id` keeps the stored user id, so sessions survive re-seeding at every start.
   */
  addUser(user: NewUser): Promise<Account>;
}

// Users are written under one advisory lock: replicas seeding the same users at start would
// otherwise race on the unique email ("deskpiloU" in ASCII, as a bigint).
const usersLockKey = '7234316346693069941';

/** The memberships of the user aliased `u`, as one `jsonb` list in the order they were added. */
export const membershipsSql = `COALESCE((SELECT jsonb_agg(jsonb_build_object('projectKey', m.project_key, 'clientId', m.client_id, 'role', m.role) ORDER BY m.position)
  FROM deskpilot_memberships m WHERE m.user_id = u.id), '[]'::jsonb)`;

// One round trip for a user and their memberships.
const accountSql = `SELECT u.id, u.email, u.name, u.email_verified_at, ${membershipsSql} AS memberships FROM deskpilot_users u WHERE u.id = $1`;

// Text no row can hold is answered "not found" without a query (see `canBeStored` of core's storage).
export { canBeStored };

/**
 * Creates a {@link UserDirectory} on Postgres or PGlite. Emails are stored normalised
 * ({@link normalizeEmail}); `updatePasswordHash` is one `UPDATE` that checks the hash it replaces, so
 * a concurrent password change wins.
 *
 * @example
 * const directory = createPostgresUserDirectory(client);
 * await directory.addUser({ email: 'rep@example.com', name: 'Rep', password: 'correct horse',
 *   memberships: [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }] });
 */
export function createPostgresUserDirectory(
  client: SqlClient,
  options: PostgresUserDirectoryOptions = {},
): PostgresUserDirectory {
  const cacheOptions = options.cache === true ? {} : options.cache || undefined;
  const cache = cacheOptions ? createReadCache<Account>(cacheOptions) : noReadCache<Account>();
  return {
    async addUser(user) {
      const email = normalizeEmail(user.email);
      if (user.passwordHash !== undefined && !isPasswordHash(user.passwordHash))
        throw new TypeError('passwordHash is not a hash verifyPassword can read');
      const passwordHash = user.passwordHash ?? (await hashPassword(user.password, options.passwordHash));
      const memberships = user.memberships.map(({ projectKey, clientId, role }) => ({ projectKey, clientId, role }));
      return cache
        .write(
          undefined,
          () =>
            client.transaction(async (transaction) => {
              await transaction.query(`SELECT pg_advisory_xact_lock(${usersLockKey})`);
              const existing = await transaction.query<{ id: string; email_verified_at: number | null }>(
                'SELECT id, email_verified_at FROM deskpilot_users WHERE email = $1',
                [email],
              );
              // Re-adding an address keeps what was proved of it, unless told otherwise.
              const verifiedAt =
                user.emailVerified === undefined
                  ? (existing.rows[0]?.email_verified_at ?? null)
                  : user.emailVerified
                    ? Date.now()
                    : null;
              const id = user.id ?? existing.rows[0]?.id ?? randomUUID();
              // Both the old holder of this email and of this id go: email and id stay unique.
              const removed = await transaction.query<{ id: string }>(
                'DELETE FROM deskpilot_users WHERE email = $1 OR id = $2 RETURNING id',
                [email, id],
              );
              // A user added again may be someone else under the same address (or id): whoever their single
              // sign-on bound to the one replaced signs in anew, bound by email again.
              await transaction.query('DELETE FROM deskpilot_identity_links WHERE user_id = ANY($1::text[])', [
                removed.rows.map((row) => row.id),
              ]);
              await transaction.query(
                'INSERT INTO deskpilot_users (id, email, name, password_hash, email_verified_at) VALUES ($1, $2, $3, $4, $5)',
                [id, email, user.name, passwordHash, verifiedAt],
              );
              await transaction.query(
                `INSERT INTO deskpilot_memberships (user_id, position, project_key, client_id, role)
               SELECT $1, ordinal, item->>'projectKey', item->>'clientId', item->>'role'
               FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS list(item, ordinal)`,
                [id, JSON.stringify(memberships)],
              );
              const account = freezeAccount({
                user: { id, email, name: user.name, emailVerified: verifiedAt !== null },
                memberships,
              });
              return { account, removed: removed.rows.map((row) => row.id) };
            }),
          ({ account, removed }) => ({ remove: removed, set: [[account.user.id, account]] }),
        )
        .then(({ account }) => account);
    },
    async findCredentials(email) {
      if (!canBeStored(email)) return null;
      const { rows } = await client.query('SELECT id, password_hash FROM deskpilot_users WHERE email = $1', [email]);
      if (!rows[0]) return null;
      const read = readStoredRow('user', rows[0]);
      return { userId: read.text('id'), passwordHash: read.text('password_hash') };
    },
    async updatePasswordHash(userId, previousHash, nextHash) {
      if (![userId, previousHash, nextHash].every(canBeStored)) return false;
      const { rowCount } = await client.query(
        'UPDATE deskpilot_users SET password_hash = $1 WHERE id = $2 AND password_hash = $3',
        [nextHash, userId, previousHash],
      );
      return rowCount === 1;
    },
    async setEmailVerified(userId, email) {
      if (![userId, email].every(canBeStored)) return false;
      // The time of the first verification stays; a user with that email counts either way.
      return cache
        .write(
          [userId],
          async () => {
            const { rows } = await client.query(
              `UPDATE deskpilot_users u SET email_verified_at = coalesce(email_verified_at, $1)
               WHERE id = $2 AND email = $3 RETURNING u.id, u.email, u.name, u.email_verified_at, ${membershipsSql} AS memberships`,
              [Date.now(), userId, email],
            );
            return rows[0] ? accountFromRow(rows[0]) : null;
          },
          (account) => (account ? { set: [[userId, account]] } : { remove: [userId] }),
        )
        .then((account) => account !== null);
    },
    ...teamMethods(client, cache),
    getAccount: (userId) =>
      canBeStored(userId)
        ? cache.read(userId, async () => {
            const { rows } = await client.query(accountSql, [userId]);
            return rows[0] ? accountFromRow(rows[0]) : null;
          })
        : Promise.resolve(null),
  };
}

// A project's membership changes are serialised by one transaction-scoped advisory lock per project
// (this class id, "dt" in ASCII, and the hash of its key): two admins demoting each other at once are
// answered one after the other, so the second sees the first and the project keeps its admin.
const teamLockClass = 25716;

/** The account of a user id inside a transaction, or null. */
async function accountIn(transaction: SqlExecutor, userId: string) {
  const { rows } = await transaction.query(accountSql, [userId]);
  return rows[0] ? accountFromRow(rows[0]) : null;
}

/** The {@link TeamDirectory} half of the Postgres directory. */
function teamMethods(client: SqlClient, cache: ReadCache<Account>): TeamDirectory {
  return {
    async findUserByEmail(email) {
      if (!canBeStored(email)) return null;
      const { rows } = await client.query(
        `SELECT u.id, u.email, u.name, u.email_verified_at, '[]'::jsonb AS memberships FROM deskpilot_users u WHERE u.email = $1`,
        [email],
      );
      return rows[0] ? accountFromRow(rows[0]).user : null;
    },

    async listMembers(projectKey) {
      if (!canBeStored(projectKey)) return [];
      const { rows } = await client.query(
        `SELECT u.id, u.email, u.name, u.email_verified_at,
           jsonb_agg(jsonb_build_object('projectKey', m.project_key, 'clientId', m.client_id, 'role', m.role) ORDER BY m.position) AS memberships
         FROM deskpilot_memberships m JOIN deskpilot_users u ON u.id = m.user_id
         WHERE m.project_key = $1 GROUP BY u.id ORDER BY u.email`,
        [projectKey],
      );
      return rows.map((row) => {
        const { user, memberships } = accountFromRow(row);
        return { user, memberships };
      });
    },

    async createUser(user) {
      if (![user.email, user.name, user.passwordHash].every(canBeStored)) return null;
      return cache.write(
        undefined,
        () =>
          client.transaction(async (transaction) => {
            await transaction.query(`SELECT pg_advisory_xact_lock(${usersLockKey})`);
            const id = randomUUID();
            const inserted = await transaction.query(
              `INSERT INTO deskpilot_users (id, email, name, password_hash, email_verified_at) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (email) DO NOTHING`,
              [id, user.email, user.name, user.passwordHash, user.emailVerified ? Date.now() : null],
            );
            if (inserted.rowCount !== 1) return null;
            await transaction.query(
              `INSERT INTO deskpilot_memberships (user_id, position, project_key, client_id, role)
                 SELECT $1, ordinal, item->>'projectKey', item->>'clientId', item->>'role'
                 FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS list(item, ordinal)`,
              [
                id,
                JSON.stringify(
                  user.memberships.map(({ projectKey, clientId, role }) => ({ projectKey, clientId, role })),
                ),
              ],
            );
            return accountIn(transaction, id);
          }),
        (account) => (account ? { set: [[account.user.id, account]] } : {}),
      );
    },

    changeMembership: (change, audit) => changeMembership(client, cache, change, audit),
  };
}

/** {@link TeamDirectory.changeMembership} on Postgres: one transaction under the project's lock, the audit event in it. */
async function changeMembership(
  client: SqlClient,
  cache: ReadCache<Account>,
  change: MembershipChange,
  audit: ((before: Membership[]) => AuditEvent) | undefined,
): Promise<MembershipChangeResult> {
  const texts = [change.userId, change.projectKey, change.role ?? '', change.clientId ?? '', change.keepRole ?? ''];
  if (!texts.every(canBeStored)) return { ok: false, reason: 'no_user' };
  const result = await cache.write(
    [change.userId],
    () =>
      client.transaction(async (transaction) => {
        await transaction.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [teamLockClass, change.projectKey]);
        // And the user's row: changes of one user in two projects (two invitations accepted at once)
        // take positions in their list one after the other.
        await transaction.query('SELECT 1 FROM deskpilot_users WHERE id = $1 FOR UPDATE', [change.userId]);
        const account = await accountIn(transaction, change.userId);
        if (!account) return { ok: false as const, reason: 'no_user' as const };
        const { rows } = await transaction.query<{ holders: string | number }>(
          `SELECT count(DISTINCT user_id) AS holders FROM deskpilot_memberships
               WHERE project_key = $1 AND role = $2 AND user_id <> $3`,
          [change.projectKey, change.keepRole ?? '', change.userId],
        );
        const applied = applyMembershipChange(account.memberships, change, Number(rows[0]?.holders ?? 0));
        if (typeof applied === 'string') return { ok: false as const, reason: applied };
        const event = audit?.(applied.before);
        if (change.remove)
          await transaction.query('DELETE FROM deskpilot_memberships WHERE user_id = $1 AND project_key = $2', [
            change.userId,
            change.projectKey,
          ]);
        else if (applied.before.length > 0)
          await transaction.query(
            'UPDATE deskpilot_memberships SET role = $3 WHERE user_id = $1 AND project_key = $2',
            [change.userId, change.projectKey, change.role],
          );
        else
          await transaction.query(
            `INSERT INTO deskpilot_memberships (user_id, position, project_key, client_id, role)
                 SELECT $1, coalesce(max(position), 0) + 1, $2, $3, $4 FROM deskpilot_memberships WHERE user_id = $1`,
            [change.userId, change.projectKey, change.clientId, change.role],
          );
        if (event) await appendAuditRecord(transaction, event);
        return {
          ok: true as const,
          before: applied.before,
          audited: event !== undefined,
          account: await accountIn(transaction, change.userId),
        };
      }),
    (outcome) => (outcome.ok && outcome.account ? { set: [[change.userId, outcome.account]] } : {}),
  );
  if (!result.ok) return result;
  return { ok: true, before: result.before, audited: result.audited };
}
