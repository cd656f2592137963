import { describe, expect, it } from 'vitest';
import { withRetries } from './with-retries.js';

describe('withRetries', () => {
  it('retries a failing call until it succeeds, reporting each failure', async () => {
    let calls = 0;
    const retried: number[] = [];
    const result = await withRetries(
      async () => {
        if (++calls < 3) throw new Error(`outage ${calls}`);
        return 'saved';
      },
      { delaysMs: [0, 0, 0], onRetry: (_error, attempt) => retried.push(attempt) },
    );
    expect(result).toBe('saved');
    expect(calls).toBe(3);
    expect(retried).toEqual([1, 2]);
  });

  it('throws the last failure once the attempts are spent', async () => {
    let calls = 0;
    await expect(
      withRetries(async () => Promise.reject(new Error(`outage ${++calls}`)), { delaysMs: [0, 0] }),
    ).rejects.toThrow('outage 3');
    expect(calls).toBe(3);
  });
});
