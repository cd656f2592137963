// @deskpilot/sso/postgres: single sign-on's identity links on Postgres or PGlite (`@deskpilot/postgres`)
// and the module's part of the schema.
import { canBeStored } from '@deskpilot/core/storage';
import type { ModuleSchema, SqlClient } from '@deskpilot/postgres';
import type { IdentityLinkStore } from './identity-link-store.js';

/**
 * Single sign-on's tables on Postgres and PGlite: give it to `openDatabase` or `migrate` as one of
 * `modules`. Its first migration creates what the core's migration 10 created in every database before
 * modules had schemas of their own (that history stays: every database has the table, and this only records
 * itself), kept identical by a test; every later change is a migration of the module's. (The user
 * directory still clears a replaced user's links in its own transaction: an address given to someone
 * else never opens the account of the person it was linked to.)
 */
export const identityLinkSchema: ModuleSchema = {
  module: 'sso',
  migrations: [
    {
      version: 1,
      name: 'identity links',
      // Which person at which identity provider (issuer + subject) is which user. One user per person,
      // one person per user at each provider.
      statements: [
        `CREATE TABLE IF NOT EXISTS deskpilot_identity_links (
          issuer text NOT NULL,
          subject text NOT NULL,
          user_id text NOT NULL,
          linked_at bigint NOT NULL,
          PRIMARY KEY (issuer, subject),
          UNIQUE (issuer, user_id)
        )`,
        `CREATE INDEX IF NOT EXISTS deskpilot_identity_links_user ON deskpilot_identity_links (user_id)`,
      ],
    },
  ],
};

/**
 * Creates an {@link IdentityLinkStore} on Postgres or PGlite: `link` is one `INSERT … ON CONFLICT DO
 * NOTHING` over both unique keys, so of concurrent links of one person one wins.
 *
 * @example
 * const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL, modules: [identityLinkSchema] });
 * const sso = createSsoModule({ identityLinks: createPostgresIdentityLinkStore(db.client), … });
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
