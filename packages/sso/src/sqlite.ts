// @deskpilot/sso/sqlite: single sign-on's identity links on SQLite (`@deskpilot/sqlite`) and the
// module's part of the schema.
import { canBeStored } from '@deskpilot/core/storage';
import type { SqliteDatabase, SqliteModuleSchema } from '@deskpilot/sqlite';
import type { IdentityLinkStore } from './identity-link-store.js';

/**
 * Single sign-on's tables on SQLite: give it to `openSqliteDatabase` as one of `modules`. Its first
 * migration creates what the core's migration 8 created in every database before modules had schemas
 * of their own (that history stays: every database has the table, and this only records itself), kept
 * identical by a test; every later change is a migration of the module's.
 */
export const identityLinkSchema: SqliteModuleSchema = {
  module: 'sso',
  migrations: [
    {
      version: 1,
      name: 'identity links',
      // Which person at which identity provider (issuer + subject) is which user. One user per person,
      // one person per user at each provider.
      sql: `
        CREATE TABLE IF NOT EXISTS deskpilot_identity_links (
          issuer TEXT NOT NULL,
          subject TEXT NOT NULL,
          user_id TEXT NOT NULL,
          linked_at INTEGER NOT NULL,
          PRIMARY KEY (issuer, subject),
          UNIQUE (issuer, user_id)
        ) STRICT;
        CREATE INDEX IF NOT EXISTS deskpilot_identity_links_user ON deskpilot_identity_links (user_id);
      `,
    },
  ],
};

/**
 * Creates an {@link IdentityLinkStore} on SQLite: `link` is one `INSERT … ON CONFLICT DO NOTHING` over
 * both unique keys.
 *
 * @example
 * const database = await openSqliteDatabase({ file: './.data/deskpilot.sqlite', modules: [identityLinkSchema] });
 * const sso = createSsoModule({ identityLinks: createSqliteIdentityLinkStore(database), … });
 */
export function createSqliteIdentityLinkStore(database: SqliteDatabase): IdentityLinkStore {
  const sql = (text: string) => database.statement(text);
  const one = (text: string, values: string[], column: string): string | null => {
    if (!values.every(canBeStored)) return null;
    const value = database.run(() => sql(text).get(...values))?.[column];
    return typeof value === 'string' ? value : null;
  };
  return {
    find: async (issuer, subject) =>
      one(
        'SELECT user_id FROM deskpilot_identity_links WHERE issuer = ? AND subject = ?',
        [issuer, subject],
        'user_id',
      ),
    subjectOf: async (issuer, userId) =>
      one('SELECT subject FROM deskpilot_identity_links WHERE issuer = ? AND user_id = ?', [issuer, userId], 'subject'),
    async link(link) {
      if (![link.issuer, link.subject, link.userId].every(canBeStored)) return false;
      const { changes } = database.run(() =>
        sql(
          'INSERT INTO deskpilot_identity_links (issuer, subject, user_id, linked_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
        ).run(link.issuer, link.subject, link.userId, link.linkedAt),
      );
      return Number(changes) === 1;
    },
    isLinked: async (userId) =>
      one('SELECT user_id FROM deskpilot_identity_links WHERE user_id = ? LIMIT 1', [userId], 'user_id') !== null,
    async deleteByUser(userId) {
      if (!canBeStored(userId)) return 0;
      const { changes } = database.run(() => sql('DELETE FROM deskpilot_identity_links WHERE user_id = ?').run(userId));
      return Number(changes);
    },
  };
}
