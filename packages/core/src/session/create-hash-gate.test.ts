import { describe, expect, it } from 'vitest';
import { createHashGate } from './create-hash-gate.js';

describe('createHashGate', () => {
  it('lets maxInFlight run, queues maxQueued in order, and refuses the next at once', async () => {
    const gate = createHashGate({ maxInFlight: 2, maxQueued: 2 });
    const first = await gate.enter()!;
    const second = await gate.enter()!;
    const order: number[] = [];
    const third = gate.enter()!.then((pass) => (order.push(3), pass));
    const fourth = gate.enter()!.then((pass) => (order.push(4), pass));
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
      const pass = await entering;
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
    const running = await gate.enter()!;
    const order: string[] = [];
    const ordinary = gate.enter()!.then((pass) => (order.push('ordinary'), pass));
    expect(gate.enter()).toBeNull();
    const known = gate.enter({ priority: true })!.then((pass) => (order.push('known'), pass));
    expect(gate.enter({ priority: true })).toBeNull();
    running.release();
    (await known).release();
    (await ordinary).release();
    expect(order).toEqual(['known', 'ordinary']);
  });

  it('defaults to the thread pool and the cores, twice that queued, and refuses bad sizes', () => {
    const gate = createHashGate();
    expect(gate.load).toEqual({ inFlight: 0, queued: 0 });
    expect(() => createHashGate({ maxInFlight: 0 })).toThrow(/maxInFlight/);
    expect(() => createHashGate({ maxQueued: -1 })).toThrow(/maxQueued/);
  });
});
