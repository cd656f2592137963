// @deskpilot/scim/postgres: the SCIM module's store on Postgres or PGlite (`@deskpilot/postgres`) and
// its part of the schema.
import type { ModuleSchema, SqlClient } from '@deskpilot/postgres';
import {
  groupColumns,
  groupFromRow,
  groupRowValues,
  tokenFromRow,
  userColumns,
  userConflict,
  userFromRow,
  userRowValues,
} from './scim-rows.js';
import { storable, userNameKey, type ScimListQuery, type ScimStore } from './scim-store.js';

/**
 * The SCIM module's tables on Postgres and PGlite: give it to `openDatabase` or `migrate` as one of
 * `modules` (`deskpilot-migrate --module @deskpilot/scim/postgres` prints or applies it).
 */
export const scimSchema: ModuleSchema = {
  module: 'scim',
  migrations: [
    {
      version: 1,
      name: 'directories',
      // Tokens kept as digests; users and groups in the order they came (`position`), each uniqueness
      // a constraint; a group's members rows of their own, gone with the group or the user.
      statements: [
        `CREATE TABLE deskpilot_scim_tokens (
          id text PRIMARY KEY,
          organization text NOT NULL,
          hash text NOT NULL UNIQUE,
          name text NOT NULL,
          created_at bigint NOT NULL,
          last_used_at bigint
        )`,
        `CREATE INDEX deskpilot_scim_tokens_organization ON deskpilot_scim_tokens (organization, created_at)`,
        // Each directory's running totals, kept in the same statement as the row they count: a list's
        // total costs one row, however many users the directory holds.
        `CREATE TABLE deskpilot_scim_directories (
          organization text PRIMARY KEY,
          users integer NOT NULL DEFAULT 0,
          groups integer NOT NULL DEFAULT 0
        )`,
        `CREATE TABLE deskpilot_scim_users (
          id text PRIMARY KEY,
          position bigint GENERATED ALWAYS AS IDENTITY,
          organization text NOT NULL,
          user_id text NOT NULL,
          user_name text NOT NULL,
          user_name_key text NOT NULL,
          external_id text,
          active boolean NOT NULL,
          attributes jsonb NOT NULL,
          created_at bigint NOT NULL,
          updated_at bigint NOT NULL,
          version integer NOT NULL,
          CONSTRAINT deskpilot_scim_users_name UNIQUE (organization, user_name_key),
          CONSTRAINT deskpilot_scim_users_external UNIQUE (organization, external_id),
          CONSTRAINT deskpilot_scim_users_account UNIQUE (organization, user_id)
        )`,
        `CREATE INDEX deskpilot_scim_users_order ON deskpilot_scim_users (organization, position)`,
        `CREATE TABLE deskpilot_scim_groups (
          id text PRIMARY KEY,
          position bigint GENERATED ALWAYS AS IDENTITY,
          organization text NOT NULL,
          display_name text NOT NULL,
          external_id text,
          created_at bigint NOT NULL,
          updated_at bigint NOT NULL,
          version integer NOT NULL,
          CONSTRAINT deskpilot_scim_groups_external UNIQUE (organization, external_id)
        )`,
        `CREATE INDEX deskpilot_scim_groups_order ON deskpilot_scim_groups (organization, position)`,
        `CREATE INDEX deskpilot_scim_groups_name ON deskpilot_scim_groups (organization, display_name)`,
        `CREATE TABLE deskpilot_scim_group_members (
          group_id text NOT NULL REFERENCES deskpilot_scim_groups (id) ON DELETE CASCADE,
          member_id text NOT NULL REFERENCES deskpilot_scim_users (id) ON DELETE CASCADE,
          PRIMARY KEY (group_id, member_id)
        )`,
        `CREATE INDEX deskpilot_scim_group_members_member ON deskpilot_scim_group_members (member_id)`,
      ],
    },
  ],
};

const duplicate = (error: unknown) => (error as { code?: unknown })?.code === '23505';

/** The `WHERE` of a list: the organisation, and the filter's column ($2). */
function listWhere(query: ScimListQuery): { where: string; values: string[] } {
  const filter = query.filter;
  if (!filter) return { where: 'organization = $1', values: [] };
  const column = { userName: 'user_name_key', externalId: 'external_id', displayName: 'display_name' }[
    filter.attribute
  ];
  return {
    where: `organization = $1 AND ${column} = $2`,
    values: [filter.attribute === 'userName' ? userNameKey(filter.value) : filter.value],
  };
}

class Refused extends Error {}

const placeholders = (count: number, from = 1) =>
  Array.from({ length: count }, (_, index) => `$${index + from}`).join(', ');

/**
 * A page of a list, side by side: its total (the directory's running total, or the few rows a filter
 * on an indexed key matches) and its rows (the page's first position found in the index alone, then
 * its rows: the rows before the page are never read).
 */
function pager(client: SqlClient) {
  return async <T>(
    table: 'deskpilot_scim_users' | 'deskpilot_scim_groups',
    columns: readonly string[],
    organization: string,
    query: ScimListQuery,
    read: (row: Record<string, unknown>) => T,
  ) => {
    const { where, values } = listWhere(query);
    if (!storable(organization, ...values)) return { total: 0, resources: [] };
    const parameters = [organization, ...values];
    const total = query.filter
      ? client.query(`SELECT count(*)::int AS total FROM ${table} WHERE ${where}`, parameters)
      : client.query(
          `SELECT ${table === 'deskpilot_scim_users' ? 'users' : 'groups'} AS total FROM deskpilot_scim_directories
           WHERE organization = $1`,
          parameters,
        );
    const offset = `$${parameters.length + 1}`;
    const [{ rows: counted }, { rows }] = await Promise.all([
      total,
      query.count === 0
        ? Promise.resolve({ rows: [] })
        : client.query(
            `SELECT ${columns.join(', ')} FROM ${table} WHERE ${where}
               AND position >= (SELECT position FROM ${table} WHERE ${where} ORDER BY position OFFSET ${offset} LIMIT 1)
             ORDER BY position LIMIT $${parameters.length + 2}`,
            [...parameters, query.startIndex - 1, query.count],
          ),
    ]);
    return { total: Number(counted[0]?.total ?? 0), resources: rows.map(read) };
  };
}

/** The tokens' part of the store. */
function tokenStore(
  client: SqlClient,
): Pick<ScimStore, 'addToken' | 'tokenByHash' | 'listTokens' | 'deleteToken' | 'tokenUsed'> {
  return {
    addToken: (token, max) =>
      client.transaction(async (transaction) => {
        // One addition per organisation at a time: the count and the insert see the same tokens.
        await transaction.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
          `deskpilot_scim_tokens:${token.organization}`,
        ]);
        const { rows } = await transaction.query(
          'SELECT count(*)::int AS live FROM deskpilot_scim_tokens WHERE organization = $1',
          [token.organization],
        );
        if (Number(rows[0]?.live) >= max) return 'limit' as const;
        await transaction.query(
          'INSERT INTO deskpilot_scim_tokens (id, organization, hash, name, created_at, last_used_at) VALUES ($1, $2, $3, $4, $5, $6)',
          [token.id, token.organization, token.hash, token.name, token.createdAt, token.lastUsedAt],
        );
        return 'added' as const;
      }),
    async tokenByHash(hash) {
      if (!storable(hash)) return null;
      const { rows } = await client.query('SELECT * FROM deskpilot_scim_tokens WHERE hash = $1', [hash]);
      return rows[0] ? tokenFromRow(rows[0]) : null;
    },
    async listTokens(organization) {
      if (!storable(organization)) return [];
      const { rows } = await client.query(
        'SELECT * FROM deskpilot_scim_tokens WHERE organization = $1 ORDER BY created_at, id',
        [organization],
      );
      return rows.map(tokenFromRow);
    },
    async deleteToken(organization, id) {
      if (!storable(organization, id)) return false;
      const { rowCount } = await client.query('DELETE FROM deskpilot_scim_tokens WHERE organization = $1 AND id = $2', [
        organization,
        id,
      ]);
      return rowCount === 1;
    },
    async tokenUsed(id, at) {
      if (!storable(id)) return;
      await client.query(
        'UPDATE deskpilot_scim_tokens SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)',
        [id, at],
      );
    },
  };
}

/** The users' part of the store. */
function userStore(client: SqlClient) {
  const page = pager(client);
  const store: Pick<
    ScimStore,
    'createUser' | 'getUser' | 'userByAccount' | 'listUsers' | 'replaceUser' | 'deleteUser'
  > = {
    async createUser(user) {
      try {
        await client.query(
          `WITH added AS (
             INSERT INTO deskpilot_scim_users (${userColumns.join(', ')}) VALUES (${placeholders(userColumns.length)})
             RETURNING organization)
           INSERT INTO deskpilot_scim_directories (organization, users) SELECT organization, 1 FROM added
           ON CONFLICT (organization) DO UPDATE SET users = deskpilot_scim_directories.users + 1`,
          userRowValues({ ...user, version: 1 }),
        );
        return 'created';
      } catch (error) {
        const conflict = duplicate(error) ? userConflict(error) : undefined;
        if (conflict) return conflict;
        throw error;
      }
    },
    async getUser(organization, id) {
      if (!storable(organization, id)) return null;
      const { rows } = await client.query(
        `SELECT ${userColumns.join(', ')} FROM deskpilot_scim_users WHERE organization = $1 AND id = $2`,
        [organization, id],
      );
      return rows[0] ? userFromRow(rows[0]) : null;
    },
    async userByAccount(organization, userId) {
      if (!storable(organization, userId)) return null;
      const { rows } = await client.query(
        `SELECT ${userColumns.join(', ')} FROM deskpilot_scim_users WHERE organization = $1 AND user_id = $2`,
        [organization, userId],
      );
      return rows[0] ? userFromRow(rows[0]) : null;
    },
    listUsers: (organization, query) =>
      page('deskpilot_scim_users', userColumns, organization, query, (row) => userFromRow(row)),
    async replaceUser(user) {
      try {
        const { rowCount } = await client.query(
          `UPDATE deskpilot_scim_users SET user_name = $3, user_name_key = $4, external_id = $5, active = $6,
             attributes = $7, updated_at = $8, version = $9
           WHERE organization = $1 AND id = $2 AND version = $10`,
          [
            user.organization,
            user.id,
            user.userName,
            userNameKey(user.userName),
            user.externalId,
            user.active,
            JSON.stringify(user.attributes),
            user.updatedAt,
            user.version,
            user.version - 1,
          ],
        );
        if (rowCount === 1) return 'replaced';
      } catch (error) {
        const conflict = duplicate(error) ? userConflict(error) : undefined;
        if (conflict === 'user_name_taken' || conflict === 'external_id_taken') return conflict;
        throw error;
      }
      return (await store.getUser(user.organization, user.id)) ? 'conflict' : 'not_found';
    },
    async deleteUser(organization, id) {
      if (!storable(organization, id)) return false;
      const { rowCount } = await client.query(
        `WITH gone AS (DELETE FROM deskpilot_scim_users WHERE organization = $1 AND id = $2 RETURNING organization),
           counted AS (UPDATE deskpilot_scim_directories d SET users = d.users - 1 FROM gone
             WHERE d.organization = gone.organization)
         SELECT organization FROM gone`,
        [organization, id],
      );
      return rowCount === 1;
    },
  };
  return store;
}

/** The groups' part of the store: a group and its members, each change one transaction. */
/** Adds members (users of the organisation only) to a group, in a transaction. */
const addMembers = (
  transaction: Pick<SqlClient, 'query'>,
  organization: string,
  id: string,
  members: readonly string[],
) =>
  transaction.query(
    `INSERT INTO deskpilot_scim_group_members (group_id, member_id)
     SELECT $1, u.id FROM deskpilot_scim_users u WHERE u.organization = $2 AND u.id = ANY($3::text[])
     ON CONFLICT DO NOTHING`,
    [id, organization, [...new Set(members)]],
  );
/** Whether every one of `members` is a user of the organisation. */
const allUsers = async (transaction: Pick<SqlClient, 'query'>, organization: string, members: readonly string[]) => {
  const distinct = [...new Set(members)];
  if (distinct.length === 0) return true;
  if (!storable(...distinct)) return false;
  const { rows } = await transaction.query(
    'SELECT count(*)::int AS found FROM deskpilot_scim_users WHERE organization = $1 AND id = ANY($2::text[])',
    [organization, distinct],
  );
  return Number(rows[0]?.found) === distinct.length;
};
function groupStore(client: SqlClient) {
  const page = pager(client);
  const store: Pick<ScimStore, 'createGroup' | 'getGroup' | 'listGroups' | 'replaceGroup' | 'deleteGroup' | 'counts'> =
    {
      createGroup: (group, members) =>
        client
          .transaction(async (transaction) => {
            try {
              await transaction.query(
                `INSERT INTO deskpilot_scim_groups (${groupColumns.join(', ')}) VALUES (${placeholders(groupColumns.length)})`,
                groupRowValues({ ...group, version: 1 }),
              );
            } catch (error) {
              if (duplicate(error) && /external/.test((error as Error).message)) throw new Refused('external_id_taken');
              throw error;
            }
            if (!(await allUsers(transaction, group.organization, members))) throw new Refused('unknown_member');
            await addMembers(transaction, group.organization, group.id, members);
            await transaction.query(
              `INSERT INTO deskpilot_scim_directories (organization, groups) VALUES ($1, 1)
               ON CONFLICT (organization) DO UPDATE SET groups = deskpilot_scim_directories.groups + 1`,
              [group.organization],
            );
            return 'created' as const;
          })
          .catch((error: unknown) => {
            if (error instanceof Refused) return error.message as 'external_id_taken' | 'unknown_member';
            throw error;
          }),
      async getGroup(organization, id) {
        if (!storable(organization, id)) return null;
        const { rows } = await client.query(
          `SELECT ${groupColumns.join(', ')} FROM deskpilot_scim_groups WHERE organization = $1 AND id = $2`,
          [organization, id],
        );
        return rows[0] ? groupFromRow(rows[0]) : null;
      },
      listGroups: (organization, query) =>
        page('deskpilot_scim_groups', groupColumns, organization, query, groupFromRow),
      async replaceGroup(group) {
        try {
          const { rowCount } = await client.query(
            `UPDATE deskpilot_scim_groups SET display_name = $3, external_id = $4, updated_at = $5, version = $6
           WHERE organization = $1 AND id = $2 AND version = $7`,
            [
              group.organization,
              group.id,
              group.displayName,
              group.externalId,
              group.updatedAt,
              group.version,
              group.version - 1,
            ],
          );
          if (rowCount === 1) return 'replaced';
        } catch (error) {
          if (duplicate(error)) return 'external_id_taken';
          throw error;
        }
        return (await store.getGroup(group.organization, group.id)) ? 'conflict' : 'not_found';
      },
      async deleteGroup(organization, id) {
        if (!storable(organization, id)) return false;
        const { rowCount } = await client.query(
          `WITH gone AS (DELETE FROM deskpilot_scim_groups WHERE organization = $1 AND id = $2 RETURNING organization),
             counted AS (UPDATE deskpilot_scim_directories d SET groups = d.groups - 1 FROM gone
               WHERE d.organization = gone.organization)
           SELECT organization FROM gone`,
          [organization, id],
        );
        return rowCount === 1;
      },
      async counts(organization) {
        if (!storable(organization)) return { users: 0, groups: 0 };
        const { rows } = await client.query(
          'SELECT users, groups FROM deskpilot_scim_directories WHERE organization = $1',
          [organization],
        );
        return { users: Number(rows[0]?.users ?? 0), groups: Number(rows[0]?.groups ?? 0) };
      },
    };
  return store;
}

/** The members' part of the store: each change one transaction, the group's row locked first. */
function memberStore(client: SqlClient): Pick<ScimStore, 'changeMembers' | 'members' | 'groupsOf'> {
  return {
    async changeMembers(organization, id, change) {
      if (!storable(organization, id)) return 'not_found';
      return client
        .transaction(async (transaction) => {
          // The group's row locked first: changes to one group's members take turns.
          const { rows } = await transaction.query(
            'SELECT id FROM deskpilot_scim_groups WHERE organization = $1 AND id = $2 FOR UPDATE',
            [organization, id],
          );
          if (rows.length === 0) return 'not_found' as const;
          if (!(await allUsers(transaction, organization, change.add))) throw new Refused('unknown_member');
          const adding = new Set(change.add);
          const removing = change.replace
            ? null
            : change.remove.filter((member) => storable(member) && !adding.has(member));
          const removed = await transaction.query<{ member_id: string }>(
            `DELETE FROM deskpilot_scim_group_members WHERE group_id = $1
             ${removing ? 'AND member_id = ANY($2::text[])' : 'AND NOT (member_id = ANY($2::text[]))'} RETURNING member_id`,
            [id, removing ?? [...adding]],
          );
          const added = await transaction.query<{ member_id: string }>(
            `INSERT INTO deskpilot_scim_group_members (group_id, member_id)
             SELECT $1, u.id FROM deskpilot_scim_users u WHERE u.organization = $2 AND u.id = ANY($3::text[])
             ON CONFLICT DO NOTHING RETURNING member_id`,
            [id, organization, [...adding]],
          );
          return { changed: [...removed.rows, ...added.rows].map((row) => row.member_id) };
        })
        .catch((error: unknown) => {
          if (error instanceof Refused) return 'unknown_member' as const;
          throw error;
        });
    },
    async members(organization, id) {
      if (!storable(organization, id)) return [];
      const { rows } = await client.query(
        `SELECT u.id, u.user_name FROM deskpilot_scim_group_members m
         JOIN deskpilot_scim_groups g ON g.id = m.group_id
         JOIN deskpilot_scim_users u ON u.id = m.member_id
         WHERE g.organization = $1 AND g.id = $2 ORDER BY u.id COLLATE "C"`,
        [organization, id],
      );
      return rows.map((row) => ({ value: String(row.id), display: String(row.user_name) }));
    },
    async groupsOf(organization, userId) {
      if (!storable(organization, userId)) return [];
      const { rows } = await client.query(
        `SELECT g.id, g.display_name, g.external_id FROM deskpilot_scim_group_members m
         JOIN deskpilot_scim_groups g ON g.id = m.group_id
         WHERE m.member_id = $2 AND g.organization = $1 ORDER BY g.position`,
        [organization, userId],
      );
      return rows.map((row) => ({
        id: String(row.id),
        displayName: String(row.display_name),
        externalId: (row.external_id as string | null) ?? null,
      }));
    },
  };
}

/**
 * Creates a {@link ScimStore} on Postgres or PGlite (`scimSchema`): each write one statement (or one
 * transaction for a group and its members) that keeps the directory's running totals too, each
 * uniqueness a constraint, a list's page read from the index and its total from the totals.
 *
 * @example
 * const scim = createPostgresScimStore(db.client);
 */
export function createPostgresScimStore(client: SqlClient): ScimStore {
  return { ...tokenStore(client), ...userStore(client), ...groupStore(client), ...memberStore(client) };
}
