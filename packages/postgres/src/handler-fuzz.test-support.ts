import {
  errorStatus,
  toFetchResponse,
  type ErrorCode,
  type HttpResponse,
  type RateLimiter,
  type SlidingWindowLimiter,
} from '@deskpilot/core';
import { createInputArbitraries } from '@deskpilot/core/testing';
import * as fc from 'fast-check';
import { expect } from 'vitest';

/** Bodies per endpoint (≥ 10,000 in CI); `FUZZ_RUNS` raises it for a long local hunt. */
export const fuzzRuns = Number(process.env.FUZZ_RUNS ?? 10_000);
/** One seed: a failure reproduces exactly. `FUZZ_SEED` explores another corner. */
export const fuzzSeed = Number(process.env.FUZZ_SEED ?? 20_260_901);
/** Time one fuzz test may take: long by design, and slower on a busy machine (or while shrinking a failure). */
export const fuzzTimeout = 180_000;
/** Every request comes from this address (the fetch entry needs one for per-address throttling). */
export const client = { clientAddress: '203.0.113.7' };

export const input = createInputArbitraries(fc, { maxTextLength: 12 });

/** A placeholder no generated value contains: where a hostile raw JSON value is spliced into a body. */
const slot = '\u0001slot\u0001';

/** Raw JSON for a field that should not hold it: bad text, too deep, too big, wrong type, prototype keys. */
export const hostileJson: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: input.invalidText.map((text) => JSON.stringify(text)) },
  { weight: 1, arbitrary: input.invalidText.map((text) => `{${JSON.stringify(text)}:1}`) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.oneof(fc.integer({ min: 25, max: 80 }), fc.integer({ min: 80, max: 200_000 })), fc.boolean())
      .map(([depth, arrays]) =>
        arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
      ),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(fc.integer({ min: 200, max: 20_000 }), fc.integer({ min: 20_000, max: 1_200_000 }))
      .map((size) => JSON.stringify('x'.repeat(size))),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'null',
      '0',
      '-0',
      '1e999',
      '-1',
      '0.5',
      'true',
      'false',
      '[]',
      '{}',
      '""',
      '" "',
      '[[]]',
      '"\\ufeff"',
      '{"__proto__":{"polluted":true}}',
      '{"constructor":{"prototype":{"polluted":true}}}',
      '"__proto__"',
      '"toString"',
    ),
  },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)) },
  { weight: 2, arbitrary: input.jsonValue.map((value) => JSON.stringify(value)) },
);

/** A body as JSON with the value at `path` replaced by raw JSON, or removed (`raw` undefined). */
export function withField(body: object, path: ReadonlyArray<string | number>, raw: string | undefined): string {
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let parent: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) {
    if (typeof parent[key] !== 'object' || parent[key] === null) parent[key] = {};
    parent = parent[key] as Record<string | number, unknown>;
  }
  const last = path.at(-1)!;
  if (raw === undefined) {
    delete parent[last];
    return JSON.stringify(copy);
  }
  // defineProperty: a key such as `__proto__` becomes an own field, as a client would send it.
  Object.defineProperty(parent, last, { value: slot, enumerable: true, configurable: true, writable: true });
  return JSON.stringify(copy).replace(JSON.stringify(slot), () => raw);
}

/** What a generated request sends: a body (text or raw bytes), its content type and origin. */
export interface FuzzRequest {
  body: string | Uint8Array;
  contentType: string | null;
  origin: string | null;
}

/**
 * Near-valid bodies: a valid body, or the same with one field set to a hostile value, removed, or an
 * extra (often prototype-named) key; then, sometimes, the bytes themselves damaged.
 */
export function nearValidBody(
  valid: fc.Arbitrary<object>,
  paths: ReadonlyArray<ReadonlyArray<string | number>>,
): fc.Arbitrary<string | Uint8Array> {
  const path = fc.constantFrom(...paths);
  const extraKey = fc.oneof(
    fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'),
    input.key,
  );
  const text = fc.oneof(
    { weight: 3, arbitrary: valid.map((body) => JSON.stringify(body)) },
    { weight: 6, arbitrary: fc.tuple(valid, path, hostileJson).map(([body, at, raw]) => withField(body, at, raw)) },
    { weight: 1, arbitrary: fc.tuple(valid, path).map(([body, at]) => withField(body, at, undefined)) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(valid, path, extraKey, hostileJson)
        .map(([body, at, key, raw]) => withField(body, [...at.slice(0, -1), key], raw)),
    },
  );
  const encoder = new TextEncoder();
  return fc.oneof(
    { weight: 20, arbitrary: text },
    // Damaged bytes: cut short, an invalid UTF-8 sequence inside, a BOM, a duplicated key, junk.
    { weight: 1, arbitrary: fc.tuple(text, fc.nat()).map(([body, at]) => body.slice(0, at % (body.length + 1))) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          text,
          fc.nat(),
          fc.constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80]),
        )
        .map(([body, at, bad]) => {
          const bytes = encoder.encode(body);
          const cut = at % (bytes.length + 1);
          return new Uint8Array([...bytes.subarray(0, cut), ...bad, ...bytes.subarray(cut)]);
        }),
    },
    { weight: 1, arbitrary: text.map((body) => `\ufeff${body}`) },
    { weight: 1, arbitrary: text.map((body) => body.replace(/^\{"([^"]+)":/, '{"$1":"\\u0000","$1":')) },
    { weight: 1, arbitrary: fc.oneof(fc.string({ unit: 'binary', maxLength: 64 }), fc.uint8Array({ maxLength: 64 })) },
  );
}

/** A request around a body: mostly well-formed headers, sometimes the wrong content type or origin. */
export function fuzzRequest(body: fc.Arbitrary<string | Uint8Array>, allowedOrigin: string): fc.Arbitrary<FuzzRequest> {
  return fc.record({
    body,
    contentType: fc.oneof(
      { weight: 20, arbitrary: fc.constant('application/json') },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          'application/json; charset=latin1',
          'APPLICATION/JSON',
          'text/plain',
          'application/x-www-form-urlencoded',
          null,
        ),
      },
    ),
    origin: fc.oneof(
      { weight: 20, arbitrary: fc.constant(allowedOrigin) },
      { weight: 1, arbitrary: fc.constantFrom(null, 'https://evil.test', 'null') },
    ),
  });
}

/** A fetch `Request` for a generated request. */
export function toRequest(
  url: string,
  method: string,
  generated: FuzzRequest,
  headers: Record<string, string> = {},
): Request {
  const all = new Headers(headers);
  if (generated.contentType !== null) all.set('content-type', generated.contentType);
  if (generated.origin !== null) all.set('origin', generated.origin);
  const body =
    typeof generated.body === 'string' ? generated.body : new Blob([generated.body as Uint8Array<ArrayBuffer>]);
  return new Request(url, { method, headers: all, body });
}

const problemCodes = new Set(Object.keys(errorStatus));

/**
 * Checks the one answer every refused request gets: a 4xx (never a 5xx), `application/problem+json`,
 * a known stable `code` whose status is the one of the table. Returns the code, or null for a 2xx.
 */
export async function expectSafeAnswer(response: HttpResponse | Response): Promise<ErrorCode | null> {
  const status = response.status;
  const headerOf = (name: string) =>
    response.headers instanceof Headers
      ? response.headers.get(name)
      : (response.headers.find(([key]) => key.toLowerCase() === name)?.[1] ?? null);
  const text = await (response instanceof Response ? response : toFetchResponse(response)).text();
  expect(status, text).toBeLessThan(500);
  if (status < 400) return null;
  expect(headerOf('content-type')).toBe('application/problem+json');
  const problem = JSON.parse(text) as { code: ErrorCode; status: number; type: string };
  expect(problemCodes.has(problem.code), problem.code).toBe(true);
  expect(problem.status).toBe(status);
  expect(errorStatus[problem.code]).toBe(status);
  expect(problem.type).toBe(`urn:deskpilot:problem:${problem.code}`);
  return problem.code;
}

/** A limiter that counts the checks made on it: a refused request must make none. */
export function countingLimiter(
  limiter: SlidingWindowLimiter,
): RateLimiter & { readonly checks: number; readonly size: number } {
  let checks = 0;
  return {
    check(key) {
      checks++;
      return limiter.check(key);
    },
    get checks() {
      return checks;
    },
    get size() {
      return limiter.size;
    },
  };
}

/**
 * The store with each writing method counted (`isWrite` tells, from a call's result, whether it
 * wrote: `getOrCreateSession` writes only when it creates). A refused request must write nothing.
 */
export function countingWrites<T extends object>(
  store: T,
  isWrite: Partial<Record<keyof T, (result: unknown, args: unknown[]) => boolean>>,
): { store: T; readonly writes: number } {
  let writes = 0;
  const counted = { ...store } as T;
  for (const name of Object.keys(isWrite) as Array<keyof T>) {
    const method = store[name] as unknown as (...args: unknown[]) => Promise<unknown>;
    (counted as Record<keyof T, unknown>)[name] = async (...args: unknown[]) => {
      const result = await method.apply(store, args);
      if (isWrite[name]!(result, args)) writes++;
      return result;
    };
  }
  return {
    store: counted,
    get writes() {
      return writes;
    },
  };
}

export const always = () => true;

/** Answers by code (and `2xx`), for the coverage checks and the optional report. */
export function createTally() {
  const counts = new Map<string, number>();
  const times = new Map<string, number>();
  return {
    add(code: string | null, milliseconds = 0) {
      const key = code ?? '2xx';
      counts.set(key, (counts.get(key) ?? 0) + 1);
      times.set(key, (times.get(key) ?? 0) + milliseconds);
    },
    get(code: string) {
      return counts.get(code) ?? 0;
    },
    /** One line per code, only when `FUZZ_REPORT` is set: the default run prints nothing. */
    report(name: string, started: number) {
      if (!process.env.FUZZ_REPORT) return;
      const total = [...counts.values()].reduce((sum, count) => sum + count, 0);
      const codes = [...counts.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([code, count]) => `${code}=${count} (${Math.round(times.get(code) ?? 0)} ms)`)
        .join(' ');
      process.stdout.write(
        `[fuzz] ${name}: ${total} requests in ${((performance.now() - started) / 1000).toFixed(1)} s, 5xx=0; ${codes}\n`,
      );
    },
  };
}
