import { describe, expect, it } from 'vitest';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import type { HttpRequest } from './http-request.js';
import { readJsonBody } from './read-json-body.js';

const encoder = new TextEncoder();

function request(body: string | Uint8Array, contentType = 'application/json'): HttpRequest {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  return { method: 'POST', path: '/', headers: new Headers({ 'content-type': contentType }), body: [bytes] };
}

/** The DeskpilotError a read fails with. */
async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => expect.unreachable('the body should have been refused'),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DeskpilotError);
  const { code, errors } = error as DeskpilotError;
  return { code, paths: errors?.map((entry) => entry.path) };
}

describe('readJsonBody', () => {
  it('returns valid text exactly as sent: astral, noncharacters, controls and RTL marks are not rewritten', async () => {
    const value = { email: 'r\u200Fep\u{1F600}@example.com', note: '\uFFFF\uFFFE\u0001\u{10FFFF}' };
    const raw = JSON.stringify(value).replace(/}$/, ',"__proto__":{"kept":true}}');
    const read = (await readJsonBody(request(raw), 1024)) as Record<string, unknown>;
    expect(read.email).toBe(value.email);
    expect(read.note).toBe(value.note);
    expect(Object.hasOwn(read, '__proto__')).toBe(true);
  });

  it.each([
    ['an invalid byte', new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])],
    ['a truncated sequence', new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe2, 0x82, 0x22, 0x7d])],
    [
      'an encoded surrogate (CESU-8)',
      new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
    ],
    ['an overlong encoding', new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d])],
  ])('refuses a body with %s as invalid_json, never decoding it to U+FFFD', async (_label, bytes) => {
    expect(await failure(readJsonBody(request(bytes), 1024))).toEqual({ code: 'invalid_json', paths: undefined });
  });

  it.each([
    ['a NUL escape', '{"email":"a\\u0000b"}', ['email']],
    ['a raw lone surrogate escape', '{"messages":[{"id":"\\ud800"}]}', ['messages.0.id']],
    ['a bad key', '{"context":{"\\udfff":1}}', ['context.\\udfff']],
    ['two bad fields', '{"a":"\\u0000","b":["\\udc00"]}', ['a', 'b.0']],
  ])('refuses %s as invalid_request naming the field', async (_label, raw, paths) => {
    expect(await failure(readJsonBody(request(raw), 1024))).toEqual({ code: 'invalid_request', paths });
  });

  it('refuses a key that is huge and invalid without echoing it whole', async () => {
    const key = `${'k'.repeat(10_000)}\u0000`;
    const { paths } = await failure(readJsonBody(request(JSON.stringify({ [key]: 1 })), 100_000));
    expect(paths![0]!.length).toBeLessThan(80);
  });

  it('refuses nesting past the limit (64 by default), even 500,000 levels deep, without a stack overflow', async () => {
    const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    expect(await readJsonBody(request(deep(64)), 1 << 20)).toBeDefined();
    expect((await failure(readJsonBody(request(deep(65)), 1 << 20))).code).toBe('invalid_request');
    expect((await failure(readJsonBody(request(deep(500_000)), 1 << 20))).code).toBe('invalid_request');
    expect((await failure(readJsonBody(request(deep(9)), 1 << 20, { maxDepth: 8 }))).paths).toEqual([
      Array(8).fill('0').join('.'),
    ]);
  });

  it('keeps its other answers: not JSON, too large, malformed', async () => {
    expect((await failure(readJsonBody(request('{}', 'text/plain'), 10))).code).toBe('unsupported_media_type');
    expect((await failure(readJsonBody(request('"xxxxxxxxxx"'), 4))).code).toBe('payload_too_large');
    expect((await failure(readJsonBody(request('{"a":'), 10))).code).toBe('invalid_json');
  });
});
