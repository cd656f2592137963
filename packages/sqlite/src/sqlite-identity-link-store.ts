import type { IdentityLinkStore } from '@deskpilot/core/session';
import type { SqliteDatabase } from './open-sqlite-database.js';
import { canBeStored } from './read-row.js';

/**
 * Creates an {@link IdentityLinkStore} on SQLite: `link` is one `INSERT … ON CONFLICT DO NOTHING` over
 * both unique keys.
 *
 * @example
 * const identityLinks = createSqliteIdentityLinkStore(await openSqliteDatabase({ file: './.data/deskpilot.sqlite' }));
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
