// @deskpilot/sso/sqlite: single sign-on's identity links on SQLite (`@deskpilot/sqlite`) and the
// module's part of the schema.
import { canBeStored } from '@deskpilot/core/storage';
import type { SqliteDatabase, SqliteModuleSchema } from '@deskpilot/sqlite';
import {
  connectionColumns,
  connectionFromRow,
  connectionRowValues,
  RolledBack,
} from './connections/connection-rows.js';
import type { SsoConnectionStore } from './connections/sso-connection-store.js';
import type { IdentityLinkStore } from './identity-link-store.js';

// JSON columns are text in SQLite: the shared row readers parse them.
const jsonAsText = { jsonAsText: true } as const;

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
    {
      version: 2,
      name: 'connections',
      // Organisations' own connections: the client secret only sealed. A domain is one row of its
      // own, its key the domain, so that of two connections claiming it one wins. The rowid orders
      // connections as they were added.
      sql: `
        CREATE TABLE deskpilot_sso_connections (
          position INTEGER PRIMARY KEY,
          id TEXT NOT NULL UNIQUE,
          organization TEXT NOT NULL,
          name TEXT NOT NULL,
          issuer TEXT NOT NULL,
          client_id TEXT NOT NULL,
          sealed_client_secret TEXT NOT NULL,
          token_endpoint_auth_method TEXT NOT NULL
            CHECK (token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post')),
          settings TEXT NOT NULL,
          enabled INTEGER NOT NULL,
          created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL,
          version INTEGER NOT NULL
        ) STRICT;
        CREATE INDEX deskpilot_sso_connections_organization ON deskpilot_sso_connections (organization, position);
        CREATE TABLE deskpilot_sso_connection_domains (
          domain TEXT PRIMARY KEY,
          connection_id TEXT NOT NULL REFERENCES deskpilot_sso_connections (id) ON DELETE CASCADE
        ) STRICT;
        CREATE INDEX deskpilot_sso_connection_domains_connection ON deskpilot_sso_connection_domains (connection_id);
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

// A connection's row with its domains (sorted in code-point order, as the memory store sorts them).
const connectionSelect = `SELECT ${connectionColumns.map((column) => `c.${column}`).join(', ')},
  (SELECT json_group_array(domain) FROM (SELECT d.domain FROM deskpilot_sso_connection_domains d
    WHERE d.connection_id = c.id ORDER BY d.domain)) AS domains
  FROM deskpilot_sso_connections c`;

/**
 * Creates an {@link SsoConnectionStore} on SQLite (migration 2 of `identityLinkSchema`): a create and a
 * replacement are one write transaction each, a domain a row keyed by itself, a replacement one
 * `UPDATE` that checks the version it replaces.
 *
 * @example
 * const connections = createSqliteSsoConnectionStore(database);
 */
export function createSqliteSsoConnectionStore(database: SqliteDatabase): SsoConnectionStore {
  const sql = (text: string) => database.statement(text);
  const values = connectionColumns.map(() => '?').join(', ');
  const rowValues = (record: Parameters<typeof connectionRowValues>[0]) =>
    connectionRowValues(record).map((value) => (typeof value === 'boolean' ? Number(value) : value));
  const many = (where: string, parameters: string[]) =>
    database
      .run(() => sql(`${connectionSelect} ${where} ORDER BY c.position`).all(...parameters))
      .map((row) => connectionFromRow(row, jsonAsText));
  /** Gives `id` its domains; rolls back (`domain_taken`) when another connection holds one. */
  const claimDomains = (id: string, domains: readonly string[]) => {
    const claim = sql(
      'INSERT INTO deskpilot_sso_connection_domains (domain, connection_id) VALUES (?, ?) ON CONFLICT (domain) DO NOTHING',
    );
    for (const domain of new Set(domains))
      if (Number(claim.run(domain, id).changes) !== 1) throw new RolledBack('domain_taken');
  };
  const outcomeOf = <Outcome extends string>(write: () => Outcome): Outcome => {
    try {
      return database.transaction(write);
    } catch (error) {
      if (error instanceof RolledBack) return error.outcome as Outcome;
      throw error;
    }
  };
  return {
    create: async (record) =>
      outcomeOf(() => {
        const { changes } = sql(
          `INSERT INTO deskpilot_sso_connections (${connectionColumns.join(', ')}) VALUES (${values}) ON CONFLICT (id) DO NOTHING`,
        ).run(...rowValues({ ...record, version: 1 }));
        if (Number(changes) !== 1) return 'exists';
        claimDomains(record.id, record.domains);
        return 'created';
      }),
    get: async (id) => (canBeStored(id) ? (many('WHERE c.id = ?', [id])[0] ?? null) : null),
    listByOrganization: async (organization) =>
      canBeStored(organization) ? many('WHERE c.organization = ?', [organization]) : [],
    list: async () => many('', []),
    findByDomain: async (domain) =>
      canBeStored(domain)
        ? (many(
            'WHERE c.enabled = 1 AND c.id = (SELECT connection_id FROM deskpilot_sso_connection_domains WHERE domain = ?)',
            [domain],
          )[0] ?? null)
        : null,
    replace: async (record) =>
      outcomeOf(() => {
        const assignments = connectionColumns.map((column) => `${column} = ?`).join(', ');
        const { changes } = sql(`UPDATE deskpilot_sso_connections SET ${assignments} WHERE id = ? AND version = ?`).run(
          ...rowValues(record),
          record.id,
          record.version - 1,
        );
        if (Number(changes) !== 1)
          return sql('SELECT 1 FROM deskpilot_sso_connections WHERE id = ?').get(record.id) ? 'conflict' : 'not_found';
        sql('DELETE FROM deskpilot_sso_connection_domains WHERE connection_id = ?').run(record.id);
        claimDomains(record.id, record.domains);
        return 'replaced';
      }),
    async delete(id) {
      if (!canBeStored(id)) return false;
      const { changes } = database.run(() => sql('DELETE FROM deskpilot_sso_connections WHERE id = ?').run(id));
      return Number(changes) === 1;
    },
  };
}
