import { afterEach, describe, expect, it, vi } from 'vitest';
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

  describe('what a mutation run found untested', () => {
    afterEach(() => {
      vi.useRealTimers();
      vi.unstubAllGlobals();
      vi.unstubAllEnvs();
    });

    it("a served waiter's timer is cleared: it never drops the next sign-in queued behind it", async () => {
      vi.useFakeTimers();
      const gate = createHashGate({ maxInFlight: 1, maxQueued: 1, maxWaitMs: 50 });
      const holder = await place(gate);
      const first = place(gate);
      await vi.advanceTimersByTimeAsync(10);
      holder.release();
      const served = await first;
      await vi.advanceTimersByTimeAsync(10);
      let second: HashGatePass | null | undefined;
      void gate.enter()!.then((pass) => (second = pass));
      // At 50 ms the first waiter's timer would fire: had it not been cleared, it would drop the second.
      await vi.advanceTimersByTimeAsync(40);
      served.release();
      await vi.advanceTimersByTimeAsync(1);
      expect(second).toBeTruthy();
    });

    it('by default lets the smaller of the thread pool and the cores run, and queues twice that', async () => {
      vi.stubEnv('UV_THREADPOOL_SIZE', '');
      vi.stubGlobal('navigator', { hardwareConcurrency: 2 });
      const gate = createHashGate();
      await place(gate);
      await place(gate);
      for (let queued = 0; queued < 4; queued++) expect(gate.enter()).not.toBeNull();
      expect(gate.enter()).toBeNull();
      expect(gate.load).toEqual({ inFlight: 2, queued: 4 });
      // A 64-core host runs the pool's 4 at most, never 64 hashes at once.
      vi.stubGlobal('navigator', { hardwareConcurrency: 64 });
      const big = createHashGate();
      for (let running = 0; running < 4; running++) await place(big);
      expect(big.load).toEqual({ inFlight: 4, queued: 0 });
      expect(big.enter()).not.toBeNull();
      expect(big.load).toEqual({ inFlight: 4, queued: 1 });
      // A runtime without navigator (Node before 21): the pool decides.
      vi.stubGlobal('navigator', undefined);
      expect(() => createHashGate()).not.toThrow();
    });

    it('takes a maxWaitMs of 0 (no wait: a queued check gives up at once)', () => {
      expect(() => createHashGate({ maxWaitMs: 0 })).not.toThrow();
    });

    it('counts priority places in a row only while an ordinary sign-in waits', async () => {
      const gate = createHashGate({ maxInFlight: 1, maxQueued: 10 });
      let current = await place(gate);
      const order: string[] = [];
      const known = Array.from({ length: 5 }, (_, index) =>
        place(gate, { priority: true }).then((pass) => (order.push(`known-${index}`), pass)),
      );
      for (const next of known.slice(0, 4)) {
        current.release();
        current = await next;
      }
      // Four priority places were given with nobody else waiting: they do not make the ordinary one next.
      const ordinary = place(gate).then((pass) => (order.push('ordinary'), pass));
      current.release();
      await Promise.race([known[4], ordinary]);
      expect(order.at(-1)).toBe('known-4');
    });

    it('serves a priority waiter when the ordinary one it took turns with gave up', async () => {
      vi.useFakeTimers();
      const gate = createHashGate({ maxInFlight: 1, maxQueued: 10, maxWaitMs: 100 });
      let current = await place(gate);
      void gate.enter();
      await vi.advanceTimersByTimeAsync(50);
      const known = Array.from({ length: 5 }, () => gate.enter({ priority: true })!);
      for (const next of known.slice(0, 4)) {
        current.release();
        current = (await next)!;
      }
      await vi.advanceTimersByTimeAsync(60);
      let last: HashGatePass | null | undefined;
      void known[4]!.then((pass) => (last = pass));
      current.release();
      await vi.advanceTimersByTimeAsync(1);
      expect(last).toBeTruthy();
    });
  });
});
