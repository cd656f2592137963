// @deskpilot/sso/postgres: single sign-on's identity links on Postgres or PGlite (`@deskpilot/postgres`)
// and the module's part of the schema.
import { canBeStored } from '@deskpilot/core/storage';
import type { ModuleSchema, SqlClient, SqlExecutor } from '@deskpilot/postgres';
import {
  connectionColumns,
  connectionFromRow,
  connectionRowValues,
  RolledBack,
} from './connections/connection-rows.js';
import type {
  SsoConnectionCreateResult,
  SsoConnectionReplaceResult,
  SsoConnectionStore,
} from './connections/sso-connection-store.js';
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
    {
      version: 2,
      name: 'connections',
      // Organisations' own connections: the client secret only sealed. A domain is one row of its
      // own, its key the domain, so that of two connections claiming it one wins.
      statements: [
        `CREATE TABLE deskpilot_sso_connections (
          id text PRIMARY KEY,
          position bigint GENERATED ALWAYS AS IDENTITY,
          organization text NOT NULL,
          name text NOT NULL,
          issuer text NOT NULL,
          client_id text NOT NULL,
          sealed_client_secret text NOT NULL,
          token_endpoint_auth_method text NOT NULL
            CHECK (token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post')),
          settings jsonb NOT NULL,
          enabled boolean NOT NULL,
          created_at bigint NOT NULL,
          updated_at bigint NOT NULL,
          version integer NOT NULL
        )`,
        `CREATE INDEX deskpilot_sso_connections_organization ON deskpilot_sso_connections (organization, position)`,
        `CREATE TABLE deskpilot_sso_connection_domains (
          domain text PRIMARY KEY,
          connection_id text NOT NULL REFERENCES deskpilot_sso_connections (id) ON DELETE CASCADE
        )`,
        `CREATE INDEX deskpilot_sso_connection_domains_connection ON deskpilot_sso_connection_domains (connection_id)`,
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

// A connection's row with its domains (sorted in code-point order, as the memory store sorts them).
const connectionSelect = `SELECT ${connectionColumns.map((column) => `c.${column}`).join(', ')},
  coalesce((SELECT jsonb_agg(d.domain ORDER BY d.domain COLLATE "C") FROM deskpilot_sso_connection_domains d
    WHERE d.connection_id = c.id), '[]'::jsonb) AS domains
  FROM deskpilot_sso_connections c`;

/** Gives `id` its domains; rolls the transaction back (`domain_taken`) when another connection holds one. */
async function claimDomains(transaction: SqlExecutor, id: string, domains: readonly string[]): Promise<void> {
  const distinct = [...new Set(domains)];
  const { rowCount } = await transaction.query(
    `INSERT INTO deskpilot_sso_connection_domains (domain, connection_id) SELECT unnest($1::text[]), $2
     ON CONFLICT (domain) DO NOTHING`,
    [distinct, id],
  );
  if (rowCount !== distinct.length) throw new RolledBack('domain_taken');
}

/** The outcome a transaction rolled back with, or what else it threw. */
function outcomeOf<Outcome extends string>(error: unknown): Outcome {
  if (error instanceof RolledBack) return error.outcome as Outcome;
  throw error;
}

/**
 * Creates an {@link SsoConnectionStore} on Postgres or PGlite (migration 2 of `identityLinkSchema`): a
 * create and a replacement are one transaction each, a domain a row keyed by itself (of concurrent
 * claims one wins), a replacement one `UPDATE` that checks the version it replaces.
 *
 * @example
 * const connections = createPostgresSsoConnectionStore(db.client);
 */
export function createPostgresSsoConnectionStore(client: SqlClient): SsoConnectionStore {
  const values = connectionColumns.map((_, index) => `$${index + 1}`).join(', ');
  const many = async (where: string, parameters: unknown[]) =>
    (await client.query(`${connectionSelect} ${where} ORDER BY c.position`, parameters)).rows.map((row) =>
      connectionFromRow(row),
    );
  return {
    create: (record) =>
      client
        .transaction(async (transaction): Promise<SsoConnectionCreateResult> => {
          const { rowCount } = await transaction.query(
            `INSERT INTO deskpilot_sso_connections (${connectionColumns.join(', ')}) VALUES (${values})
             ON CONFLICT (id) DO NOTHING`,
            connectionRowValues({ ...record, version: 1 }),
          );
          if (rowCount !== 1) return 'exists';
          await claimDomains(transaction, record.id, record.domains);
          return 'created';
        })
        .catch(outcomeOf<SsoConnectionCreateResult>),
    async get(id) {
      if (!canBeStored(id)) return null;
      return (await many('WHERE c.id = $1', [id]))[0] ?? null;
    },
    listByOrganization: async (organization) =>
      canBeStored(organization) ? many('WHERE c.organization = $1', [organization]) : [],
    list: () => many('', []),
    async findByDomain(domain) {
      if (!canBeStored(domain)) return null;
      const found = await many(
        'WHERE c.enabled AND c.id = (SELECT connection_id FROM deskpilot_sso_connection_domains WHERE domain = $1)',
        [domain],
      );
      return found[0] ?? null;
    },
    replace: (record) =>
      client
        .transaction(async (transaction): Promise<SsoConnectionReplaceResult> => {
          const { rowCount } = await transaction.query(
            `UPDATE deskpilot_sso_connections SET (${connectionColumns.join(', ')}) = (${values})
             WHERE id = $1 AND version = $${connectionColumns.length + 1}`,
            [...connectionRowValues(record), record.version - 1],
          );
          if (rowCount !== 1) {
            const { rows } = await transaction.query('SELECT 1 FROM deskpilot_sso_connections WHERE id = $1', [
              record.id,
            ]);
            return rows.length === 0 ? 'not_found' : 'conflict';
          }
          await transaction.query('DELETE FROM deskpilot_sso_connection_domains WHERE connection_id = $1', [record.id]);
          await claimDomains(transaction, record.id, record.domains);
          return 'replaced';
        })
        .catch(outcomeOf<SsoConnectionReplaceResult>),
    async delete(id) {
      if (!canBeStored(id)) return false;
      const { rowCount } = await client.query('DELETE FROM deskpilot_sso_connections WHERE id = $1', [id]);
      return rowCount === 1;
    },
  };
}
