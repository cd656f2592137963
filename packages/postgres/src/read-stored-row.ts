import { DeskpilotError } from '@deskpilot/core/session';
import type { SqlRow } from './sql-client.js';

/** Typed, checked access to the columns of one stored row. */
export interface StoredRowReader {
  text(column: string): string;
  nullableText(column: string): string | null;
  /** A safe integer (epoch milliseconds, versions). */
  integer(column: string): number;
  oneOf<Value extends string>(column: string, values: readonly Value[]): Value;
  /** A parsed `jsonb` value that passes `check`. */
  json<Value>(column: string, check: (value: unknown) => value is Value, expected: string): Value;
}

/**
 * Reads a row the database returned. A value of the wrong shape (a row edited by hand, a bad
 * migration) is a `store_unavailable` error naming the record kind, never a crash deeper in.
 */
export function readStoredRow(what: string, row: SqlRow): StoredRowReader {
  const fail = (column: string, expected: string): never => {
    const id = typeof row.id === 'string' ? ` ${JSON.stringify(row.id)}` : '';
    throw new DeskpilotError('store_unavailable', {
      detail: `A stored ${what} is corrupted and cannot be read.`,
      cause: new TypeError(`Stored ${what}${id}: column "${column}" is not ${expected}.`),
    });
  };
  const reader: StoredRowReader = {
    text: (column) => (typeof row[column] === 'string' ? (row[column] as string) : fail(column, 'a string')),
    nullableText: (column) => (row[column] === null ? null : reader.text(column)),
    integer: (column) => (Number.isSafeInteger(row[column]) ? (row[column] as number) : fail(column, 'a safe integer')),
    oneOf: (column, values) =>
      values.includes(row[column] as never)
        ? (row[column] as (typeof values)[number])
        : fail(column, `one of ${values.join(', ')}`),
    json: (column, check, expected) => (check(row[column]) ? row[column] : fail(column, expected)),
  };
  return reader;
}

/** True for a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for an object whose values all have the given `typeof`. */
export function isRecordOf<Type extends 'string' | 'boolean'>(type: Type) {
  return (value: unknown): value is Record<string, Type extends 'string' ? string : boolean> =>
    isJsonObject(value) && Object.values(value).every((entry) => typeof entry === type);
}

/** Any JSON value, `null` included. */
export function isJsonValue(_value: unknown): _value is unknown {
  return true;
}
