import { isJsonObject, readStoredRow, type StoredRow, type StoredRowOptions } from '@deskpilot/core/storage';
import type { SsoConnectionRecord, SsoConnectionSettings } from './sso-connection-store.js';

/** The columns of a connection, in the order {@link connectionRowValues} gives them (its domains are rows of their own). */
export const connectionColumns: readonly string[] = [
  'id',
  'organization',
  'name',
  'issuer',
  'client_id',
  'sealed_client_secret',
  'token_endpoint_auth_method',
  'settings',
  'enabled',
  'created_at',
  'updated_at',
  'version',
];

/** The values of a connection in {@link connectionColumns} order (`settings` as JSON text). */
export function connectionRowValues(record: SsoConnectionRecord): Array<string | number | boolean> {
  return [
    record.id,
    record.organization,
    record.name,
    record.issuer,
    record.clientId,
    record.sealedClientSecret,
    record.tokenEndpointAuthMethod,
    JSON.stringify(record.settings),
    record.enabled,
    record.createdAt,
    record.updatedAt,
    record.version,
  ];
}

const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((entry) => typeof entry === 'string');

/** A connection from a row holding {@link connectionColumns} and `domains` (a JSON list of text). */
export function connectionFromRow(row: StoredRow, options?: StoredRowOptions): SsoConnectionRecord {
  const read = readStoredRow('single sign-on connection', row, options);
  return {
    id: read.text('id'),
    organization: read.text('organization'),
    name: read.text('name'),
    issuer: read.text('issuer'),
    clientId: read.text('client_id'),
    sealedClientSecret: read.text('sealed_client_secret'),
    tokenEndpointAuthMethod: read.oneOf('token_endpoint_auth_method', ['client_secret_basic', 'client_secret_post']),
    domains: read.json('domains', isStringList, 'a list of strings').sort(),
    settings: read.json('settings', (value): value is SsoConnectionSettings => isJsonObject(value), 'a JSON object'),
    enabled: read.flag('enabled'),
    createdAt: read.integer('created_at'),
    updatedAt: read.integer('updated_at'),
    version: read.integer('version'),
  };
}

/** The outcome a store's transaction ends with when it must undo what it did. */
export class RolledBack<Outcome extends string> extends Error {
  readonly outcome: Outcome;
  constructor(outcome: Outcome) {
    super(outcome);
    this.outcome = outcome;
  }
}
