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

/** A {@link UserDirectory} on SQLite. */
export interface SqliteUserDirectory extends UserDirectory {
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
    async getAccount(userId) {
      if (!canBeStored(userId)) return null;
      const row = database.run(() => sql(accountSql).get(userId));
      return row ? toAccount(row) : null;
    },
  };
}
