import { isJsonObject, readStoredRow, type StoredRow, type StoredRowOptions } from '@deskpilot/core/storage';
import type { ScimGroupRecord, ScimTokenRecord, ScimUserRecord } from './scim-store.js';

// The rows of the SCIM tables, shared by the Postgres and SQLite stores (JSON is text in SQLite).

export const tokenFromRow = (row: StoredRow): ScimTokenRecord => {
  const read = readStoredRow('SCIM token', row);
  return {
    id: read.text('id'),
    organization: read.text('organization'),
    hash: read.text('hash'),
    name: read.text('name'),
    createdAt: read.integer('created_at'),
    lastUsedAt: read.nullableInteger('last_used_at'),
  };
};

export const userColumns = [
  'id',
  'organization',
  'user_id',
  'user_name',
  'user_name_key',
  'external_id',
  'active',
  'attributes',
  'created_at',
  'updated_at',
  'version',
] as const;

export function userRowValues(user: ScimUserRecord): unknown[] {
  return [
    user.id,
    user.organization,
    user.userId,
    user.userName,
    user.userName.toLowerCase(),
    user.externalId,
    user.active,
    JSON.stringify(user.attributes),
    user.createdAt,
    user.updatedAt,
    user.version,
  ];
}

export function userFromRow(row: StoredRow, options?: StoredRowOptions): ScimUserRecord {
  const read = readStoredRow('SCIM user', row, options);
  return {
    id: read.text('id'),
    organization: read.text('organization'),
    userId: read.text('user_id'),
    userName: read.text('user_name'),
    externalId: read.nullableText('external_id'),
    active: read.flag('active'),
    attributes: read.json('attributes', isJsonObject, 'a JSON object'),
    createdAt: read.integer('created_at'),
    updatedAt: read.integer('updated_at'),
    version: read.integer('version'),
  };
}

export const groupColumns = [
  'id',
  'organization',
  'display_name',
  'external_id',
  'created_at',
  'updated_at',
  'version',
] as const;

export const groupRowValues = (group: ScimGroupRecord): unknown[] => [
  group.id,
  group.organization,
  group.displayName,
  group.externalId,
  group.createdAt,
  group.updatedAt,
  group.version,
];

export function groupFromRow(row: StoredRow): ScimGroupRecord {
  const read = readStoredRow('SCIM group', row);
  return {
    id: read.text('id'),
    organization: read.text('organization'),
    displayName: read.text('display_name'),
    externalId: read.nullableText('external_id'),
    createdAt: read.integer('created_at'),
    updatedAt: read.integer('updated_at'),
    version: read.integer('version'),
  };
}

/** Which uniqueness a violated constraint of the users' table was, by its name. */
export function userConflict(error: unknown): 'user_name_taken' | 'external_id_taken' | 'account_taken' | undefined {
  const text = `${(error as { constraint?: string })?.constraint ?? ''} ${(error as Error)?.message ?? ''}`;
  if (/user_name_key|scim_users_name/.test(text)) return 'user_name_taken';
  if (/external_id|scim_users_external/.test(text)) return 'external_id_taken';
  if (/user_id|scim_users_account/.test(text)) return 'account_taken';
  return undefined;
}
