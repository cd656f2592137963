import { canonicalJson } from '../../encoding/canonical-hash.js';

/** One write call that a demo backend actually ran (replays are not logged). */
export interface BackendCall {
  method: string;
  projectKey: string;
  idempotencyKey?: string;
}

/** Recorded outcomes of a project's writes, by method and idempotency key. */
export type IdempotencyRecords = Map<string, { input: string; result: unknown }>;

/** Most write calls a demo backend keeps in its `calls` log; older ones are dropped. */
export const maxLoggedCalls = 1000;

/**
 * Runs a write once per idempotency key: a repeated key returns a copy of the first recorded result
 * and runs nothing. The check and the record happen in one synchronous stretch, so concurrent calls
 * cannot both run. Reusing a key for a different input is a caller bug and throws.
 */
export function runIdempotentWrite<Result>(
  records: IdempotencyRecords,
  calls: BackendCall[],
  call: { method: string; projectKey: string; idempotencyKey: string; input: unknown },
  write: () => Result,
): Result {
  if (typeof call.idempotencyKey !== 'string' || call.idempotencyKey.length === 0) {
    throw new TypeError(`${call.method} needs an idempotency key`);
  }
  const recordKey = `${call.method}\u0000${call.idempotencyKey}`;
  const input = canonicalJson(call.input);
  const recorded = records.get(recordKey);
  if (recorded) {
    if (recorded.input !== input) throw new Error(`${call.method}: idempotency key reused with a different input`);
    return structuredClone(recorded.result as Result);
  }
  const result = write();
  records.set(recordKey, { input, result: structuredClone(result) });
  calls.push({ method: call.method, projectKey: call.projectKey, idempotencyKey: call.idempotencyKey });
  if (calls.length > maxLoggedCalls) calls.splice(0, calls.length - maxLoggedCalls);
  return result;
}
