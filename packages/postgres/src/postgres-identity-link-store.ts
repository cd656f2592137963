import type { IdentityLinkStore } from '@deskpilot/core/session';
import { canBeStored } from './postgres-user-directory.js';
import type { SqlClient } from './sql-client.js';

/**
 * Creates an {@link IdentityLinkStore} on Postgres or PGlite: `link` is one `INSERT … ON CONFLICT DO
 * NOTHING` over both unique keys, so of concurrent links of one person one wins.
 *
 * @example
 * const identityLinks = createPostgresIdentityLinkStore(db.client);
 */
export function createPostgresIdentityLinkStore(client: SqlClient): IdentityLinkStore {
  const one = async (sql: string, values: string[], column: string): Promise<string | null> => {
    if (!values.every(canBeStored)) return null;
    const { rows } = await client.query(sql, values);
    const value = rows[0]?.[column];
    return typeof value === 'string' ? value : null;
  };
  return {
    find: (issuer, subject) =>
      one(
        'SELECT user_id FROM deskpilot_identity_links WHERE issuer = $1 AND subject = $2',
        [issuer, subject],
        'user_id',
      ),
    subjectOf: (issuer, userId) =>
      one(
        'SELECT subject FROM deskpilot_identity_links WHERE issuer = $1 AND user_id = $2',
        [issuer, userId],
        'subject',
      ),
    async link(link) {
      if (![link.issuer, link.subject, link.userId].every(canBeStored)) return false;
      const { rowCount } = await client.query(
        'INSERT INTO deskpilot_identity_links (issuer, subject, user_id, linked_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
        [link.issuer, link.subject, link.userId, link.linkedAt],
      );
      return rowCount === 1;
    },
    isLinked: async (userId) =>
      (await one('SELECT user_id FROM deskpilot_identity_links WHERE user_id = $1 LIMIT 1', [userId], 'user_id')) !==
      null,
    async deleteByUser(userId) {
      if (!canBeStored(userId)) return 0;
      const { rowCount } = await client.query('DELETE FROM deskpilot_identity_links WHERE user_id = $1', [userId]);
      return rowCount;
    },
  };
}
