import { DeskpilotError } from '@deskpilot/core/session';

/** One row as node:sqlite returns it. */
export type Row = Record<string, unknown>;

/** Typed, checked access to the columns of one stored row. */
export interface RowReader {
  text(column: string): string;
  nullableText(column: string): string | null;
  /** A safe integer (epoch milliseconds, versions). */
  integer(column: string): number;
  oneOf<Value extends string>(column: string, values: readonly Value[]): Value;
  /** The column's JSON text, parsed, when the value passes `check`. */
  json<Value>(column: string, check: (value: unknown) => value is Value, expected: string): Value;
}

/**
 * Reads a row the database returned. A value of the wrong shape (a row edited by hand, JSON that does
 * not parse) is a `store_unavailable` error naming the record kind, never a crash deeper in.
 */
export function readRow(what: string, row: Row): RowReader {
  const fail = (column: string, expected: string): never => {
    const id = typeof row.id === 'string' ? ` ${JSON.stringify(row.id)}` : '';
    throw new DeskpilotError('store_unavailable', {
      detail: `A stored ${what} is corrupted and cannot be read.`,
      cause: new TypeError(`Stored ${what}${id}: column "${column}" is not ${expected}.`),
    });
  };
  const reader: RowReader = {
    text: (column) => (typeof row[column] === 'string' ? (row[column] as string) : fail(column, 'a string')),
    nullableText: (column) => (row[column] === null ? null : reader.text(column)),
    integer: (column) => (Number.isSafeInteger(row[column]) ? (row[column] as number) : fail(column, 'a safe integer')),
    oneOf: (column, values) =>
      values.includes(row[column] as never)
        ? (row[column] as (typeof values)[number])
        : fail(column, `one of ${values.join(', ')}`),
    json(column, check, expected) {
      let value: unknown;
      try {
        value = JSON.parse(reader.text(column));
      } catch {
        return fail(column, expected);
      }
      return check(value) ? value : fail(column, expected);
    },
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

// ES2024's `String.prototype.isWellFormed` (Node ≥ 20); the project's TypeScript lib is ES2023.
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * False for text no row can hold as given: SQLite stores UTF-8, so a lone surrogate becomes U+FFFD on
 * the way in — and could then match another row. Such a key is answered "not found" without a query.
 */
export const canBeStored = (text: string) => isWellFormed(text);
