import { readStoredRow, type StoredRow, type StoredRowOptions } from '@deskpilot/core/storage';
import type { PasskeyRecord } from './passkey-store.js';

/** The columns of a passkey, in the order {@link passkeyFromRow} reads them. */
export const passkeyColumns: readonly string[] = [
  'id',
  'user_id',
  'public_key',
  'counter',
  'transports',
  'device_type',
  'backed_up',
  'name',
  'created_at',
  'last_used_at',
];

const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((entry) => typeof entry === 'string');

/** A passkey from a row holding {@link passkeyColumns} (`backed_up` a boolean, or 0/1 from SQLite). */
export function passkeyFromRow(row: StoredRow, options?: StoredRowOptions): PasskeyRecord {
  const read = readStoredRow('passkey', row, options);
  return {
    id: read.text('id'),
    userId: read.text('user_id'),
    publicKey: read.text('public_key'),
    counter: read.integer('counter'),
    transports: read.json('transports', isStringList, 'a list of strings'),
    deviceType: read.oneOf('device_type', ['singleDevice', 'multiDevice'] as const),
    backedUp: read.flag('backed_up'),
    name: read.text('name'),
    createdAt: read.integer('created_at'),
    lastUsedAt: read.nullableInteger('last_used_at'),
  };
}
