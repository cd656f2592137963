import { randomUUID } from 'node:crypto';
import {
  hashPassword,
  isPasswordHash,
  normalizeEmail,
  type Account,
  type NewUser,
  type PasswordHashOptions,
  type UserDirectory,
} from '@deskpilot/core/session';
import { applyMembershipChange, type TeamDirectory } from '@deskpilot/core/team';
import { appendAuditRecord } from './sqlite-audit-store.js';
import type { SqliteDatabase } from './open-sqlite-database.js';
import { accountFromRow, freezeAccount, readStoredRow } from '@deskpilot/core/storage';
import { canBeStored, jsonAsText, type Row } from './read-row.js';

/** Options of {@link createSqliteUserDirectory}. */
export interface SqliteUserDirectoryOptions {
  /**
   * scrypt parameters of the hash of a user added with a plain password; give the session service
   * (which upgrades hashes and checks the decoy) the same ones.
   * @default N=2^17, r=8, p=1 (those of `hashPassword`)
   */
  passwordHash?: PasswordHashOptions;
}

/** A {@link UserDirectory} on SQLite, whose memberships a team administers ({@link TeamDirectory}). */
export interface SqliteUserDirectory extends UserDirectory, TeamDirectory {
  /**
   * Adds or replaces, by email, a user; resolves to the stored account. Re-adding an email without an
   * `id` keeps the stored user id, so sessions survive re-seeding at every start.
   */
  addUser(user: NewUser): Promise<Account>;
}

/** The memberships of the user aliased `u`, as one JSON list in the order they were added. */
export const membershipsSql = `(SELECT json_group_array(json_object('projectKey', m.project_key, 'clientId', m.client_id, 'role', m.role) ORDER BY m.position)
  FROM deskpilot_memberships m WHERE m.user_id = u.id)`;

// One statement for a user and their memberships.
const accountSql = `SELECT u.id, u.email, u.name, u.email_verified_at, ${membershipsSql} AS memberships FROM deskpilot_users u WHERE u.id = ?`;

/** A deep-frozen account from a row with the user's `id`, `email`, `name` and `memberships` (JSON text). */
export const toAccount = (row: Row): Account => accountFromRow(row, jsonAsText);

/**
 * Creates a {@link UserDirectory} on SQLite. Emails are stored normalised ({@link normalizeEmail});
 * `updatePasswordHash` is one `UPDATE` that checks the hash it replaces, so a concurrent password
 * change wins.
 *
 * @example
 * const directory = createSqliteUserDirectory(database);
 * await directory.addUser({ email: 'rep@example.com', name: 'Rep', password: 'correct horse',
 *   memberships: [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }] });
 */
export function createSqliteUserDirectory(
  database: SqliteDatabase,
  options: SqliteUserDirectoryOptions = {},
): SqliteUserDirectory {
  const sql = (text: string) => database.statement(text);
  return {
    async addUser(user) {
      const email = normalizeEmail(user.email);
      if (user.passwordHash !== undefined && !isPasswordHash(user.passwordHash))
        throw new TypeError('passwordHash is not a hash verifyPassword can read');
      const passwordHash = user.passwordHash ?? (await hashPassword(user.password, options.passwordHash));
      const memberships = user.memberships.map(({ projectKey, clientId, role }) => ({ projectKey, clientId, role }));
      return database.transaction(() => {
        const existing = sql('SELECT id, email_verified_at FROM deskpilot_users WHERE email = ?').get(email);
        // Re-adding an address keeps what was proved of it, unless told otherwise.
        const verifiedAt =
          user.emailVerified === undefined
            ? ((existing?.email_verified_at as number | null | undefined) ?? null)
            : user.emailVerified
              ? Date.now()
              : null;
        const id = user.id ?? (existing?.id as string | undefined) ?? randomUUID();
        // Both the old holder of this email and of this id go: email and id stay unique.
        // A user added again may be someone else under the same address (or id): whoever their single
        // sign-on bound to the one replaced signs in anew, bound by email again.
        sql(
          'DELETE FROM deskpilot_identity_links WHERE user_id IN (SELECT id FROM deskpilot_users WHERE email = ? OR id = ?)',
        ).run(email, id);
        sql('DELETE FROM deskpilot_users WHERE email = ? OR id = ?').run(email, id);
        sql(
          'INSERT INTO deskpilot_users (id, email, name, password_hash, email_verified_at) VALUES (?, ?, ?, ?, ?)',
        ).run(id, email, user.name, passwordHash, verifiedAt);
        const insertMembership = sql(
          'INSERT INTO deskpilot_memberships (user_id, position, project_key, client_id, role) VALUES (?, ?, ?, ?, ?)',
        );
        memberships.forEach((membership, position) =>
          insertMembership.run(id, position, membership.projectKey, membership.clientId, membership.role),
        );
        return freezeAccount({ user: { id, email, name: user.name, emailVerified: verifiedAt !== null }, memberships });
      });
    },
    async findCredentials(email) {
      if (!canBeStored(email)) return null;
      const row = database.run(() => sql('SELECT id, password_hash FROM deskpilot_users WHERE email = ?').get(email));
      if (!row) return null;
      const read = readStoredRow('user', row);
      return { userId: read.text('id'), passwordHash: read.text('password_hash') };
    },
    async updatePasswordHash(userId, previousHash, nextHash) {
      if (![userId, previousHash, nextHash].every(canBeStored)) return false;
      const { changes } = database.run(() =>
        sql('UPDATE deskpilot_users SET password_hash = ? WHERE id = ? AND password_hash = ?').run(
          nextHash,
          userId,
          previousHash,
        ),
      );
      return Number(changes) === 1;
    },
    async setEmailVerified(userId, email) {
      if (![userId, email].every(canBeStored)) return false;
      // The time of the first verification stays; a user with that email counts either way.
      const { changes } = database.run(() =>
        sql(
          'UPDATE deskpilot_users SET email_verified_at = coalesce(email_verified_at, ?) WHERE id = ? AND email = ?',
        ).run(Date.now(), userId, email),
      );
      return Number(changes) === 1;
    },
    ...teamMethods(database),
    async getAccount(userId) {
      if (!canBeStored(userId)) return null;
      const row = database.run(() => sql(accountSql).get(userId));
      return row ? toAccount(row) : null;
    },
  };
}

/** The {@link TeamDirectory} half of the SQLite directory: each change one write transaction (`BEGIN IMMEDIATE`). */
function teamMethods(database: SqliteDatabase): TeamDirectory {
  const sql = (text: string) => database.statement(text);
  const accountOf = (userId: string) => {
    const row = sql(accountSql).get(userId);
    return row ? toAccount(row) : null;
  };
  return {
    async findUserByEmail(email) {
      if (!canBeStored(email)) return null;
      const row = database.run(() =>
        sql(`SELECT id, email, name, email_verified_at, '[]' AS memberships FROM deskpilot_users WHERE email = ?`).get(
          email,
        ),
      );
      return row ? toAccount(row).user : null;
    },

    async listMembers(projectKey) {
      if (!canBeStored(projectKey)) return [];
      const rows = database.run(() =>
        sql(
          `SELECT u.id, u.email, u.name, u.email_verified_at,
             json_group_array(json_object('projectKey', m.project_key, 'clientId', m.client_id, 'role', m.role) ORDER BY m.position) AS memberships
           FROM deskpilot_memberships m JOIN deskpilot_users u ON u.id = m.user_id
           WHERE m.project_key = ? GROUP BY u.id ORDER BY u.email`,
        ).all(projectKey),
      );
      return rows.map((row) => {
        const { user, memberships } = toAccount(row);
        return { user, memberships };
      });
    },

    async createUser(user) {
      if (![user.email, user.name, user.passwordHash].every(canBeStored)) return null;
      return database.transaction(() => {
        const id = randomUUID();
        const { changes } = sql(
          `INSERT INTO deskpilot_users (id, email, name, password_hash, email_verified_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (email) DO NOTHING`,
        ).run(id, user.email, user.name, user.passwordHash, user.emailVerified ? Date.now() : null);
        if (Number(changes) !== 1) return null;
        const insert = sql(
          'INSERT INTO deskpilot_memberships (user_id, position, project_key, client_id, role) VALUES (?, ?, ?, ?, ?)',
        );
        user.memberships.forEach((membership, position) =>
          insert.run(id, position, membership.projectKey, membership.clientId, membership.role),
        );
        return accountOf(id);
      });
    },

    async changeMembership(change, audit) {
      const texts = [change.userId, change.projectKey, change.role ?? '', change.clientId ?? '', change.keepRole ?? ''];
      if (!texts.every(canBeStored)) return { ok: false, reason: 'no_user' };
      return database.transaction(() => {
        const account = accountOf(change.userId);
        if (!account) return { ok: false, reason: 'no_user' };
        const holders = sql(
          `SELECT count(DISTINCT user_id) AS holders FROM deskpilot_memberships
           WHERE project_key = ? AND role = ? AND user_id <> ?`,
        ).get(change.projectKey, change.keepRole ?? '', change.userId) as { holders: number } | undefined;
        const applied = applyMembershipChange(account.memberships, change, Number(holders?.holders ?? 0));
        if (typeof applied === 'string') return { ok: false, reason: applied };
        const event = audit?.(applied.before);
        if (change.remove)
          sql('DELETE FROM deskpilot_memberships WHERE user_id = ? AND project_key = ?').run(
            change.userId,
            change.projectKey,
          );
        else if (applied.before.length > 0)
          sql('UPDATE deskpilot_memberships SET role = ? WHERE user_id = ? AND project_key = ?').run(
            change.role,
            change.userId,
            change.projectKey,
          );
        else
          sql(
            `INSERT INTO deskpilot_memberships (user_id, position, project_key, client_id, role)
             SELECT ?, coalesce(max(position), -1) + 1, ?, ?, ? FROM deskpilot_memberships WHERE user_id = ?`,
          ).run(change.userId, change.projectKey, change.clientId ?? '', change.role, change.userId);
        if (event) appendAuditRecord(database, event);
        return { ok: true, before: applied.before, audited: event !== undefined };
      });
    },
  };
}
