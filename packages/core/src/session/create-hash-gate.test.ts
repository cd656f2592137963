import { describe, expect, it } from 'vitest';
import { createHashGate, type HashGate, type HashGatePass } from './create-hash-gate.js';

/** A place, or a failed test: these cases expect one. */
async function place(gate: HashGate, options?: { priority?: boolean }): Promise<HashGatePass> {
  const pass = await gate.enter(options);
  if (!pass) throw new Error('expected a place');
  return pass;
}

describe('createHashGate', () => {
  it('lets maxInFlight run, queues maxQueued in order, and refuses the next at once', async () => {
    const gate = createHashGate({ maxInFlight: 2, maxQueued: 2 });
    const first = await place(gate);
    const second = await place(gate);
    const order: number[] = [];
    const third = place(gate).then((pass) => (order.push(3), pass));
    const fourth = place(gate).then((pass) => (order.push(4), pass));
    expect(gate.enter()).toBeNull();
    expect(gate.load).toEqual({ inFlight: 2, queued: 2 });
    first.release();
    first.release(); // twice frees one place only
    await third;
    expect(order).toEqual([3]);
    expect(gate.load).toEqual({ inFlight: 2, queued: 1 });
    second.release();
    (await fourth).release();
    (await third).release();
    expect(gate.load).toEqual({ inFlight: 0, queued: 0 });
  });

  it('bounds the work under a flood: of 200 checks sent at once, maxInFlight + maxQueued run, the rest are refused', async () => {
    const gate = createHashGate({ maxInFlight: 4, maxQueued: 8 });
    let running = 0;
    let most = 0;
    const check = async () => {
      const entering = gate.enter();
      if (!entering) return 'refused';
      const pass = (await entering)!;
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 1));
      running--;
      pass.release();
      return 'checked';
    };
    const outcomes = await Promise.all(Array.from({ length: 200 }, check));
    expect(outcomes.filter((outcome) => outcome === 'checked')).toHaveLength(12);
    expect(most).toBe(4);
  });

  it('serves the priority lane first, each lane with its own queue', async () => {
    const gate = createHashGate({ maxInFlight: 1, maxQueued: 1 });
    const running = await place(gate);
    const order: string[] = [];
    const ordinary = place(gate).then((pass) => (order.push('ordinary'), pass));
    expect(gate.enter()).toBeNull();
    const known = place(gate, { priority: true }).then((pass) => (order.push('known'), pass));
    expect(gate.enter({ priority: true })).toBeNull();
    running.release();
    (await known).release();
    (await ordinary).release();
    expect(order).toEqual(['known', 'ordinary']);
  });

  it('never starves the ordinary lane: every fifth place goes to it while it waits', async () => {
    const gate = createHashGate({ maxInFlight: 1, maxQueued: 10 });
    let current = await place(gate);
    const order: string[] = [];
    const track = (lane: string, pass: Promise<HashGatePass>) => pass.then((granted) => (order.push(lane), granted));
    const ordinary = track('ordinary', place(gate));
    const known = Array.from({ length: 6 }, () => track('known', place(gate, { priority: true })));
    for (const next of [...known.slice(0, 4), ordinary, ...known.slice(4)]) {
      current.release();
      current = await next;
    }
    current.release();
    expect(order).toEqual(['known', 'known', 'known', 'known', 'ordinary', 'known', 'known']);
  });

  it('gives up a wait longer than maxWaitMs: a hung check ahead does not hold the queue', async () => {
    const gate = createHashGate({ maxInFlight: 1, maxQueued: 1, maxWaitMs: 20 });
    const hung = await place(gate);
    expect(await gate.enter()).toBeNull();
    expect(gate.load).toEqual({ inFlight: 1, queued: 0 });
    hung.release();
    (await place(gate)).release();
  });

  it('defaults to the thread pool and the cores, twice that queued, and refuses bad sizes', () => {
    const gate = createHashGate();
    expect(gate.load).toEqual({ inFlight: 0, queued: 0 });
    expect(() => createHashGate({ maxInFlight: 0 })).toThrow(/maxInFlight/);
    expect(() => createHashGate({ maxQueued: -1 })).toThrow(/maxQueued/);
    expect(() => createHashGate({ maxWaitMs: -1 })).toThrow(/maxWaitMs/);
  });
});
