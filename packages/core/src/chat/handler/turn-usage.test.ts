import { describe, expect, it } from 'vitest';
import { addUsage, turnUsageOf } from './token-budget.js';

describe('turnUsageOf', () => {
  it('keeps what the provider reports of its cache: tokens read, and tokens written when there are any', () => {
    const reported = turnUsageOf({
      inputTokens: 1_000,
      outputTokens: 50,
      totalTokens: 1_050,
      inputTokenDetails: { noCacheTokens: 200, cacheReadTokens: 600, cacheWriteTokens: 200 },
      outputTokenDetails: { textTokens: 40, reasoningTokens: 10 },
    });
    expect(reported).toEqual({
      inputTokens: 1_000,
      outputTokens: 50,
      totalTokens: 1_050,
      cachedInputTokens: 600,
      cacheWriteInputTokens: 200,
      reasoningTokens: 10,
    });
    const plain = turnUsageOf({
      inputTokens: 10,
      outputTokens: 5,
      totalTokens: 15,
      inputTokenDetails: { noCacheTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
      outputTokenDetails: { textTokens: 5, reasoningTokens: undefined },
    });
    expect(plain).toEqual({ inputTokens: 10, outputTokens: 5, totalTokens: 15, cachedInputTokens: 0 });
    // An answer continued after an approval adds each count, the cache's too.
    expect(addUsage(reported, plain)).toMatchObject({
      inputTokens: 1_010,
      cachedInputTokens: 600,
      cacheWriteInputTokens: 200,
    });
  });
});
