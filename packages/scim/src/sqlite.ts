// @deskpilot/scim/sqlite: the SCIM module's store on SQLite (`@deskpilot/sqlite`) and its part of the
// schema.
import type { SqliteDatabase, SqliteModuleSchema } from '@deskpilot/sqlite';
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

/** The SCIM module's tables on SQLite: give it to `openSqliteDatabase` as one of `modules`. */
export const scimSchema: SqliteModuleSchema = {
  module: 'scim',
  migrations: [
    {
      version: 1,
      name: 'directories',
      // Tokens kept as digests; each directory's running totals, kept in the transaction of the row
      // they count; users and groups in the order they came (the rowid), each uniqueness a constraint;
      // a group's members rows of their own, deleted with the group or the user.
      sql: `
        CREATE TABLE deskpilot_scim_tokens (
          id TEXT PRIMARY KEY,
          organization TEXT NOT NULL,
          hash TEXT NOT NULL UNIQUE,
          name TEXT NOT NULL,
          created_at INTEGER NOT NULL,
          last_used_at INTEGER
        ) STRICT;
        CREATE INDEX deskpilot_scim_tokens_organization ON deskpilot_scim_tokens (organization, created_at);
        CREATE TABLE deskpilot_scim_directories (
          organization TEXT PRIMARY KEY,
          users INTEGER NOT NULL DEFAULT 0,
          groups INTEGER NOT NULL DEFAULT 0
        ) STRICT;
        CREATE TABLE deskpilot_scim_users (
          position INTEGER PRIMARY KEY,
          id TEXT NOT NULL UNIQUE,
          organization TEXT NOT NULL,
          user_id TEXT NOT NULL,
          user_name TEXT NOT NULL,
          user_name_key TEXT NOT NULL,
          external_id TEXT,
          active INTEGER NOT NULL CHECK (active IN (0, 1)),
          attributes TEXT NOT NULL,
          created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL,
          version INTEGER NOT NULL,
          UNIQUE (organization, user_name_key),
          UNIQUE (organization, external_id),
          UNIQUE (organization, user_id)
        ) STRICT;
        CREATE INDEX deskpilot_scim_users_order ON deskpilot_scim_users (organization, position);
        CREATE TABLE deskpilot_scim_groups (
          position INTEGER PRIMARY KEY,
          id TEXT NOT NULL UNIQUE,
          organization TEXT NOT NULL,
          display_name TEXT NOT NULL,
          external_id TEXT,
          created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL,
          version INTEGER NOT NULL,
          UNIQUE (organization, external_id)
        ) STRICT;
        CREATE INDEX deskpilot_scim_groups_order ON deskpilot_scim_groups (organization, position);
        CREATE INDEX deskpilot_scim_groups_name ON deskpilot_scim_groups (organization, display_name);
        CREATE TABLE deskpilot_scim_group_members (
          group_id TEXT NOT NULL,
          member_id TEXT NOT NULL,
          PRIMARY KEY (group_id, member_id)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX deskpilot_scim_group_members_member ON deskpilot_scim_group_members (member_id);
      `,
    },
  ],
};

const jsonAsText = { jsonAsText: true } as const;
const isConstraint = (error: unknown) => /UNIQUE constraint failed/.test((error as Error)?.message ?? '');
/** SQLite binds no booleans: a user's row with `active` as 0 or 1. */
const userRow = (values: unknown[]) => values.map((value) => (typeof value === 'boolean' ? Number(value) : value));

function listWhere(query: ScimListQuery): { where: string; values: string[] } {
  const filter = query.filter;
  if (!filter) return { where: 'organization = ?', values: [] };
  const column = { userName: 'user_name_key', externalId: 'external_id', displayName: 'display_name' }[
    filter.attribute
  ];
  return {
    where: `organization = ? AND ${column} = ?`,
    values: [filter.attribute === 'userName' ? userNameKey(filter.value) : filter.value],
  };
}

class Refused extends Error {}

/** The statements the parts of the store share. */
function statements(database: SqliteDatabase) {
  const sql = (text: string) => database.statement(text);
  type Row = Record<string, unknown>;
  const all = (text: string, ...values: unknown[]) =>
    database.run(() => sql(text).all(...(values as never[]))) as Row[];
  const page = <T>(
    table: 'deskpilot_scim_users' | 'deskpilot_scim_groups',
    columns: readonly string[],
    organization: string,
    query: ScimListQuery,
    read: (row: Row) => T,
  ) => {
    const { where, values } = listWhere(query);
    if (!storable(organization, ...values)) return { total: 0, resources: [] };
    const totals = table === 'deskpilot_scim_users' ? 'users' : 'groups';
    return database.run(() => {
      // The directory's running total, or the few rows a filter on an indexed key matches.
      const counted = query.filter
        ? sql(`SELECT count(*) AS total FROM ${table} WHERE ${where}`).get(organization, ...values)
        : sql(`SELECT ${totals} AS total FROM deskpilot_scim_directories WHERE organization = ?`).get(organization);
      // The page's first position found in the index alone: the rows before it are never read.
      const rows =
        query.count === 0
          ? []
          : (sql(
              `SELECT ${columns.join(', ')} FROM ${table} WHERE ${where} AND position >= (
                 SELECT position FROM ${table} WHERE ${where} ORDER BY position LIMIT 1 OFFSET ?)
               ORDER BY position LIMIT ?`,
            ).all(organization, ...values, organization, ...values, query.startIndex - 1, query.count) as Row[]);
      return { total: Number((counted as Row | undefined)?.total ?? 0), resources: rows.map(read) };
    });
  };
  const allUsers = (organization: string, members: readonly string[]) => {
    const distinct = [...new Set(members)];
    if (!storable(...distinct)) return false;
    const found = sql('SELECT 1 FROM deskpilot_scim_users WHERE organization = ? AND id = ?');
    return distinct.every((member) => found.get(organization, member) !== undefined);
  };
  /** Adds members to a group: the ones it did not have. */
  const addMembers = (id: string, members: Iterable<string>) => {
    const insert = sql(
      'INSERT INTO deskpilot_scim_group_members (group_id, member_id) VALUES (?, ?) ON CONFLICT DO NOTHING',
    );
    return [...new Set(members)].filter((member) => Number(insert.run(id, member).changes) === 1);
  };
  const groupExists = (organization: string, id: string) =>
    sql('SELECT 1 FROM deskpilot_scim_groups WHERE organization = ? AND id = ?').get(organization, id) !== undefined;
  /** Moves a directory's running total, inside the caller's transaction. */
  const count = (organization: string, column: 'users' | 'groups', by: 1 | -1) =>
    sql(
      `INSERT INTO deskpilot_scim_directories (organization, ${column}) VALUES (?, ?)
       ON CONFLICT (organization) DO UPDATE SET ${column} = ${column} + excluded.${column}`,
    ).run(organization, by);
  return { sql, all, page, allUsers, addMembers, groupExists, count };
}

type Statements = ReturnType<typeof statements>;

/** The tokens' part of the store. */
function tokenStore(
  database: SqliteDatabase,
  { sql, all }: Statements,
): Pick<ScimStore, 'addToken' | 'tokenByHash' | 'listTokens' | 'deleteToken' | 'tokenUsed'> {
  return {
    async addToken(token, max) {
      // One write transaction: the count and the insert see the same tokens.
      return database.transaction(() => {
        const { live } = sql('SELECT count(*) AS live FROM deskpilot_scim_tokens WHERE organization = ?').get(
          token.organization,
        ) as { live: number };
        if (Number(live) >= max) return 'limit';
        sql(
          'INSERT INTO deskpilot_scim_tokens (id, organization, hash, name, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?)',
        ).run(token.id, token.organization, token.hash, token.name, token.createdAt, token.lastUsedAt);
        return 'added';
      });
    },
    async tokenByHash(hash) {
      if (!storable(hash)) return null;
      const [row] = all('SELECT * FROM deskpilot_scim_tokens WHERE hash = ?', hash);
      return row ? tokenFromRow(row) : null;
    },
    listTokens: async (organization) =>
      storable(organization)
        ? all('SELECT * FROM deskpilot_scim_tokens WHERE organization = ? ORDER BY created_at, id', organization).map(
            tokenFromRow,
          )
        : [],
    async deleteToken(organization, id) {
      if (!storable(organization, id)) return false;
      const { changes } = database.run(() =>
        sql('DELETE FROM deskpilot_scim_tokens WHERE organization = ? AND id = ?').run(organization, id),
      );
      return Number(changes) === 1;
    },
    async tokenUsed(id, at) {
      if (!storable(id)) return;
      database.run(() =>
        sql(
          'UPDATE deskpilot_scim_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)',
        ).run(at, id, at),
      );
    },
  };
}

/** The users' part of the store. */
function userStore(database: SqliteDatabase, { sql, all, page, count }: Statements) {
  const store: Pick<
    ScimStore,
    'createUser' | 'getUser' | 'userByAccount' | 'listUsers' | 'replaceUser' | 'deleteUser'
  > = {
    async createUser(user) {
      try {
        database.transaction(() => {
          sql(
            `INSERT INTO deskpilot_scim_users (${userColumns.join(', ')}) VALUES (${userColumns.map(() => '?').join(', ')})`,
          ).run(...(userRow(userRowValues({ ...user, version: 1 })) as never[]));
          count(user.organization, 'users', 1);
        });
        return 'created';
      } catch (error) {
        const conflict = isConstraint(error) ? userConflict(error) : undefined;
        if (conflict) return conflict;
        throw error;
      }
    },
    async getUser(organization, id) {
      if (!storable(organization, id)) return null;
      const [row] = all(
        `SELECT ${userColumns.join(', ')} FROM deskpilot_scim_users WHERE organization = ? AND id = ?`,
        organization,
        id,
      );
      return row ? userFromRow(row, jsonAsText) : null;
    },
    async userByAccount(organization, userId) {
      if (!storable(organization, userId)) return null;
      const [row] = all(
        `SELECT ${userColumns.join(', ')} FROM deskpilot_scim_users WHERE organization = ? AND user_id = ?`,
        organization,
        userId,
      );
      return row ? userFromRow(row, jsonAsText) : null;
    },
    listUsers: async (organization, query) =>
      page('deskpilot_scim_users', userColumns, organization, query, (row) => userFromRow(row, jsonAsText)),
    async replaceUser(user) {
      try {
        const { changes } = database.run(() =>
          sql(
            `UPDATE deskpilot_scim_users SET user_name = ?, user_name_key = ?, external_id = ?, active = ?, attributes = ?,
               updated_at = ?, version = ? WHERE organization = ? AND id = ? AND version = ?`,
          ).run(
            user.userName,
            userNameKey(user.userName),
            user.externalId,
            Number(user.active),
            JSON.stringify(user.attributes),
            user.updatedAt,
            user.version,
            user.organization,
            user.id,
            user.version - 1,
          ),
        );
        if (Number(changes) === 1) return 'replaced';
      } catch (error) {
        const conflict = isConstraint(error) ? userConflict(error) : undefined;
        if (conflict === 'user_name_taken' || conflict === 'external_id_taken') return conflict;
        throw error;
      }
      return (await store.getUser(user.organization, user.id)) ? 'conflict' : 'not_found';
    },
    async deleteUser(organization, id) {
      if (!storable(organization, id)) return false;
      return database.transaction(() => {
        const { changes } = sql('DELETE FROM deskpilot_scim_users WHERE organization = ? AND id = ?').run(
          organization,
          id,
        );
        if (Number(changes) !== 1) return false;
        sql('DELETE FROM deskpilot_scim_group_members WHERE member_id = ?').run(id);
        count(organization, 'users', -1);
        return true;
      });
    },
  };
  return store;
}

/** The groups' part of the store. */
function groupStore(database: SqliteDatabase, { sql, all, page, allUsers, addMembers, count }: Statements) {
  const store: Pick<ScimStore, 'createGroup' | 'getGroup' | 'listGroups' | 'replaceGroup' | 'deleteGroup' | 'counts'> =
    {
      async createGroup(group, members) {
        try {
          return database.transaction(() => {
            try {
              sql(
                `INSERT INTO deskpilot_scim_groups (${groupColumns.join(', ')}) VALUES (${groupColumns.map(() => '?').join(', ')})`,
              ).run(...(groupRowValues({ ...group, version: 1 }) as never[]));
            } catch (error) {
              if (isConstraint(error) && /external_id/.test((error as Error).message))
                throw new Refused('external_id_taken');
              throw error;
            }
            if (!allUsers(group.organization, members)) throw new Refused('unknown_member');
            addMembers(group.id, members);
            count(group.organization, 'groups', 1);
            return 'created' as const;
          });
        } catch (error) {
          if (error instanceof Refused) return error.message as 'external_id_taken' | 'unknown_member';
          throw error;
        }
      },
      async getGroup(organization, id) {
        if (!storable(organization, id)) return null;
        const [row] = all(
          `SELECT ${groupColumns.join(', ')} FROM deskpilot_scim_groups WHERE organization = ? AND id = ?`,
          organization,
          id,
        );
        return row ? groupFromRow(row) : null;
      },
      listGroups: async (organization, query) =>
        page('deskpilot_scim_groups', groupColumns, organization, query, groupFromRow),
      async replaceGroup(group) {
        try {
          const { changes } = database.run(() =>
            sql(
              `UPDATE deskpilot_scim_groups SET display_name = ?, external_id = ?, updated_at = ?, version = ?
             WHERE organization = ? AND id = ? AND version = ?`,
            ).run(
              group.displayName,
              group.externalId,
              group.updatedAt,
              group.version,
              group.organization,
              group.id,
              group.version - 1,
            ),
          );
          if (Number(changes) === 1) return 'replaced';
        } catch (error) {
          if (isConstraint(error)) return 'external_id_taken';
          throw error;
        }
        return (await store.getGroup(group.organization, group.id)) ? 'conflict' : 'not_found';
      },
      async deleteGroup(organization, id) {
        if (!storable(organization, id)) return false;
        return database.transaction(() => {
          const { changes } = sql('DELETE FROM deskpilot_scim_groups WHERE organization = ? AND id = ?').run(
            organization,
            id,
          );
          if (Number(changes) !== 1) return false;
          sql('DELETE FROM deskpilot_scim_group_members WHERE group_id = ?').run(id);
          count(organization, 'groups', -1);
          return true;
        });
      },
      async counts(organization) {
        if (!storable(organization)) return { users: 0, groups: 0 };
        const [row] = all('SELECT users, groups FROM deskpilot_scim_directories WHERE organization = ?', organization);
        return { users: Number(row?.users ?? 0), groups: Number(row?.groups ?? 0) };
      },
    };
  return store;
}

/** The members' part of the store: each change one write transaction. */
function memberStore(
  database: SqliteDatabase,
  { sql, all, allUsers, addMembers, groupExists }: Statements,
): Pick<ScimStore, 'changeMembers' | 'members' | 'groupsOf'> {
  return {
    async changeMembers(organization, id, change) {
      if (!storable(organization, id)) return 'not_found';
      return database.transaction(() => {
        if (!groupExists(organization, id)) return 'not_found';
        if (!allUsers(organization, change.add)) return 'unknown_member';
        const adding = new Set(change.add);
        const changed: string[] = [];
        const remove = sql('DELETE FROM deskpilot_scim_group_members WHERE group_id = ? AND member_id = ?');
        const removing = change.replace
          ? (
              sql('SELECT member_id FROM deskpilot_scim_group_members WHERE group_id = ?').all(id) as Array<{
                member_id: string;
              }>
            ).map((row) => row.member_id)
          : change.remove.filter((member) => storable(member));
        for (const member of removing)
          if (!adding.has(member) && Number(remove.run(id, member).changes) === 1) changed.push(member);
        changed.push(...addMembers(id, adding));
        return { changed };
      });
    },
    async members(organization, id) {
      if (!storable(organization, id)) return [];
      return all(
        `SELECT u.id, u.user_name FROM deskpilot_scim_group_members m
         JOIN deskpilot_scim_groups g ON g.id = m.group_id
         JOIN deskpilot_scim_users u ON u.id = m.member_id
         WHERE g.organization = ? AND g.id = ? ORDER BY u.id`,
        organization,
        id,
      ).map((row) => ({ value: String(row.id), display: String(row.user_name) }));
    },
    async groupsOf(organization, userId) {
      if (!storable(organization, userId)) return [];
      return all(
        `SELECT g.id, g.display_name, g.external_id FROM deskpilot_scim_group_members m
         JOIN deskpilot_scim_groups g ON g.id = m.group_id
         WHERE m.member_id = ? AND g.organization = ? ORDER BY g.position`,
        userId,
        organization,
      ).map((row) => ({
        id: String(row.id),
        displayName: String(row.display_name),
        externalId: (row.external_id as string | null) ?? null,
      }));
    },
  };
}

/**
 * Creates a {@link ScimStore} on SQLite (`scimSchema`): each write one statement or one write
 * transaction, each uniqueness a constraint, lists one indexed page and one count.
 *
 * @example
 * const scim = createSqliteScimStore(database);
 */
export function createSqliteScimStore(database: SqliteDatabase): ScimStore {
  const shared = statements(database);
  return {
    ...tokenStore(database, shared),
    ...userStore(database, shared),
    ...groupStore(database, shared),
    ...memberStore(database, shared),
  };
}
