import { DeskpilotError } from '@deskpilot/core/session';

// SQLSTATE classes and codes that say "the database cannot serve us now", not "your data is wrong":
// https://www.postgresql.org/docs/current/errcodes-appendix.html
const unavailableClasses = new Set([
  '08', // connection exception
  '28', // invalid authorization (bad credentials in the deployment, not in the request)
  '53', // insufficient resources: disk full, out of memory, too many connections
  '57', // operator intervention: shutdown, crash, query cancelled by a timeout
  '58', // system error: I/O
  'XX', // internal error, data or index corrupted
]);
const unavailableCodes = new Set([
  '25006', // read-only transaction: a replica or a database in recovery
  '3D000', // the database does not exist
  '40001', // serialization failure
  '40P01', // deadlock detected
  '55P03', // lock not available
]);
// Driver messages for a lost or unusable connection, which carry no SQLSTATE.
const connectionMessage =
  /connection|terminated|not queryable|timeout|timed out|after calling end on the pool|PGlite is closed|closed database/i;

/** Emscripten's file system errors inside PGlite: plain objects, not Errors (`{ name: 'ErrnoError', errno }`). */
const isEmscriptenFileError = (error: unknown) =>
  typeof error === 'object' &&
  error !== null &&
  (error as { name?: unknown }).name === 'ErrnoError' &&
  typeof (error as { errno?: unknown }).errno === 'number';

function isUnavailable(error: unknown): boolean {
  if (isEmscriptenFileError(error)) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    // Node socket and file errors (ECONNREFUSED, ECONNRESET, ENOSPC, …); no SQLSTATE class starts with E.
    if (/^E[A-Z_]+$/.test(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code)) return unavailableCodes.has(code) || unavailableClasses.has(code.slice(0, 2));
  }
  // A trapped WebAssembly instance is an embedded database that can no longer answer.
  if (error.name === 'RuntimeError') return true;
  return connectionMessage.test(error.message);
}

/**
 * Maps a driver error: infrastructure failures (connection refused or lost, read-only database, disk
 * full, shutdown, …) become a `store_unavailable` {@link DeskpilotError} (HTTP 503); anything else,
 * such as a duplicate key, is returned unchanged. Use it when writing your own `SqlClient`.
 */
export function toStoreError(error: unknown): unknown {
  if (DeskpilotError.isInstance(error) || !isUnavailable(error)) return error;
  return new DeskpilotError('store_unavailable', { detail: 'The database is unavailable.', cause: error });
}
