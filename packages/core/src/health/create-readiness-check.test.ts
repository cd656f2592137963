import { describe, expect, it } from 'vitest';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import { createReadinessCheck, healthResponse, readinessResponse } from './create-readiness-check.js';

const never = () => new Promise<void>(() => {});

describe('createReadinessCheck', () => {
  it('is ready when every check passes, and lists each one', async () => {
    const readiness = createReadinessCheck({ checks: { session_store: async () => {}, redis: async () => {} } });
    expect(await readiness()).toEqual({
      ready: true,
      checks: [
        { name: 'session_store', ok: true },
        { name: 'redis', ok: true },
      ],
    });
  });

  it('lists every failing check, not only the first, and counts a hung one as failed at its timeout', async () => {
    const failures: Array<[string, unknown]> = [];
    const readiness = createReadinessCheck({
      checks: {
        chat_store: never,
        redis: () => Promise.reject(new Error('connect ECONNREFUSED redis://:secret@cache:6379')),
        thrown: () => {
          throw new Error('synchronous');
        },
        fine: async () => {},
      },
      timeoutMs: 20,
      onCheckFailed: (name, error) => failures.push([name, error]),
    });
    const result = await readiness();
    expect(result).toEqual({
      ready: false,
      checks: [
        { name: 'chat_store', ok: false },
        { name: 'redis', ok: false },
        { name: 'thrown', ok: false },
        { name: 'fine', ok: true },
      ],
    });
    expect(failures.map(([name]) => name).sort()).toEqual(['chat_store', 'redis', 'thrown']);
    expect(String(failures.find(([name]) => name === 'chat_store')![1])).toContain('no answer within 20 ms');
  });

  it('does not start a check again while an earlier run of it is still pending', async () => {
    let started = 0;
    let finish!: () => void;
    const readiness = createReadinessCheck({
      checks: {
        database: () => {
          started += 1;
          return started === 1 ? new Promise<void>((resolve) => (finish = resolve)) : Promise.resolve();
        },
      },
      timeoutMs: 10,
    });
    expect((await readiness()).ready).toBe(false);
    expect((await readiness()).ready).toBe(false);
    expect(started).toBe(1);
    finish();
    expect((await readiness()).ready).toBe(true);
    // Once the pending run has settled, a probe runs the check afresh.
    expect((await readiness()).ready).toBe(true);
    expect(started).toBeGreaterThan(1);
  });

  it('once draining, answers not ready without running the checks', async () => {
    let runs = 0;
    const readiness = createReadinessCheck({ checks: { database: async () => void (runs += 1) } });
    expect((await readiness()).ready).toBe(true);
    expect(readiness.draining).toBe(false);
    readiness.startDraining();
    expect(readiness.draining).toBe(true);
    expect(await readiness()).toEqual({ ready: false, checks: [{ name: 'shutdown', ok: false }] });
    expect(runs).toBe(1);
  });

  it('refuses a timeout that is not a positive number', () => {
    for (const timeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => createReadinessCheck({ checks: {}, timeoutMs })).toThrow(TypeError);
  });
});

describe('probe responses', () => {
  it('liveness is 200 { status: ok }, never cached', () => {
    const response = healthResponse();
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body as string)).toEqual({ status: 'ok' });
    expect(response.headers).toContainEqual(['cache-control', 'no-store']);
  });

  it('ready is 200 with the checks', () => {
    const response = readinessResponse({ ready: true, checks: [{ name: 'chat_store', ok: true }] });
    expect(response.status).toBe(200);
    expect(response.headers).toContainEqual(['content-type', 'application/json']);
    expect(JSON.parse(response.body as string)).toEqual({
      status: 'ready',
      checks: [{ name: 'chat_store', ok: true }],
    });
  });

  it('an optional dependency that fails is reported, 200 degraded, and a required one still decides', async () => {
    const failed: string[] = [];
    const readiness = createReadinessCheck({
      checks: { chat_store: async () => {} },
      optional: { mcp_kb: () => Promise.reject(new Error('connect ECONNREFUSED http://kb:7400/mcp')) },
      onCheckFailed: (name) => failed.push(name),
    });
    const response = readinessResponse(await readiness());
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body as string)).toEqual({
      status: 'degraded',
      checks: [
        { name: 'chat_store', ok: true },
        { name: 'mcp_kb', ok: false, required: false },
      ],
    });
    expect(response.body).not.toContain('ECONNREFUSED');
    expect(failed).toEqual(['mcp_kb']);

    const storeDown = createReadinessCheck({
      checks: { chat_store: () => Promise.reject(new Error('down')) },
      optional: { mcp_kb: () => Promise.reject(new Error('down')) },
    });
    const notReady = readinessResponse(await storeDown());
    expect(notReady.status).toBe(503);
    expect(JSON.parse(notReady.body as string).detail).toBe('Not ready: chat_store.');
  });

  it('not ready is 503 problem+json, code unavailable, naming each failing dependency and nothing else', async () => {
    const readiness = createReadinessCheck({
      checks: {
        chat_store: () =>
          Promise.reject(
            new DeskpilotError('store_unavailable', { cause: new Error('postgres://deskpilot:hunter2@db/chat') }),
          ),
        redis: async () => {},
      },
    });
    const response = readinessResponse(await readiness());
    expect(response.status).toBe(503);
    expect(response.headers).toContainEqual(['content-type', 'application/problem+json']);
    expect(response.headers).toContainEqual(['cache-control', 'no-store']);
    const body = JSON.parse(response.body as string);
    expect(body).toMatchObject({
      status: 503,
      code: 'unavailable',
      detail: 'Not ready: chat_store.',
      checks: [
        { name: 'chat_store', ok: false },
        { name: 'redis', ok: true },
      ],
    });
    expect(response.body).not.toContain('hunter2');
    expect(response.body).not.toContain('postgres://');
  });
});
