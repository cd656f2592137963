import { DeskpilotError } from '@deskpilot/core/session';

// SQLite's primary result codes that say "the database cannot serve us now", not "your data is wrong":
// https://sqlite.org/rescode.html
const unavailableCodes = new Set([
  5, // SQLITE_BUSY: another process held the write lock past the busy timeout
  6, // SQLITE_LOCKED
  7, // SQLITE_NOMEM
  8, // SQLITE_READONLY: a read-only file or directory
  10, // SQLITE_IOERR
  11, // SQLITE_CORRUPT
  13, // SQLITE_FULL: disk full
  14, // SQLITE_CANTOPEN
  15, // SQLITE_PROTOCOL: the write-ahead log's locks contended between processes
  26, // SQLITE_NOTADB: the file is not a database
]);

function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, errcode } = error as { code?: unknown; errcode?: unknown };
  // node:sqlite: ERR_SQLITE_ERROR with SQLite's extended result code; its primary code is the low byte.
  if (code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number') return unavailableCodes.has(errcode & 0xff);
  // A statement on a closed database; an integer column past 2^53 (a row edited by hand).
  if (code === 'ERR_INVALID_STATE' || code === 'ERR_OUT_OF_RANGE') return true;
  // Node's own file errors while opening (ENOENT, EACCES, ENOSPC, …).
  return typeof code === 'string' && /^E[A-Z]+$/.test(code);
}

/**
 * Maps a SQLite error: infrastructure failures (busy past the timeout, read-only or full disk, I/O,
 * corruption, a closed database) become a `store_unavailable` {@link DeskpilotError} (HTTP 503);
 * anything else, such as a constraint violation, is returned unchanged.
 */
export function toStoreError(error: unknown): unknown {
  if (DeskpilotError.isInstance(error) || !isUnavailable(error)) return error;
  return new DeskpilotError('store_unavailable', { detail: 'The database is unavailable.', cause: error });
}
