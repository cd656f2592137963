import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalogue, createPriceCatalogue } from './price-catalogue.js';

const openai = { provider: 'openai.responses', modelId: 'gpt-4o' };
const usage = (input: number, output: number, cached?: number) => ({
  inputTokens: input,
  outputTokens: output,
  totalTokens: input + output,
  ...(cached === undefined ? {} : { cachedInputTokens: cached }),
});

describe('createPriceCatalogue', () => {
  it('prices from the maintained catalogue, cached input at the cache rate, with its source and date', () => {
    const price = createPriceCatalogue();
    // gpt-4o in the catalogue: $2.50 per million input, $1.25 cached, $10 output.
    expect(price(usage(1_000_000, 1_000_000), openai)).toEqual({
      currency: 'USD',
      amount: 12.5,
      source: '@pydantic/genai-prices 0.1.8',
      asOf: '2026-09-23',
    });
    expect(price(usage(1_000_000, 1_000_000, 500_000), openai)?.amount).toBe(11.875);
    expect(price(usage(1_000, 100), { provider: 'anthropic.messages', modelId: 'claude-sonnet-4-5' })?.amount).toBe(
      0.0045,
    );
  });

  it('prices input written to the provider’s cache at its cache-write rate, from the catalogue and the operator', () => {
    const written = { ...usage(100_000, 0), cacheWriteInputTokens: 100_000 };
    const claude = { provider: 'anthropic.messages', modelId: 'claude-sonnet-4-5' };
    // $3.75 per million written, against $3 for plain input.
    expect(createPriceCatalogue()(written, claude)?.amount).toBe(0.375);
    expect(createPriceCatalogue()(usage(100_000, 0), claude)?.amount).toBe(0.3);
    const mine = { inputPerMillion: 1, outputPerMillion: 1, cacheWriteInputPerMillion: 2, asOf: '2026-11-01' };
    expect(
      createPriceCatalogue({ prices: { 'vllm:m': mine } })(written, { provider: 'vllm', modelId: 'm' })?.amount,
    ).toBe(0.2);
  });

  it('prices the operator’s models first, by the AI SDK’s name, the provider family, or the model id', () => {
    const mine = { inputPerMillion: 1, outputPerMillion: 2, cachedInputPerMillion: 0.5, asOf: '2026-11-01' };
    const price = createPriceCatalogue({
      prices: { 'openai:gpt-4o': mine, 'llama-3.3-70b': { ...mine, currency: 'EUR' } },
    });
    expect(price(usage(2_000_000, 1_000_000, 1_000_000), openai)).toEqual({
      currency: 'USD',
      amount: 3.5,
      source: 'operator',
      asOf: '2026-11-01',
    });
    expect(price(usage(1_000_000, 0), { provider: 'vllm.chat', modelId: 'llama-3.3-70b' })).toMatchObject({
      currency: 'EUR',
      amount: 1,
    });
  });

  it('gives no cost for a model neither prices, rather than a guessed one; the catalogue can be turned off', () => {
    expect(createPriceCatalogue()(usage(1000, 10), { provider: 'deskpilot', modelId: 'demo' })).toBeUndefined();
    expect(createPriceCatalogue({ catalogue: false })(usage(1000, 10), openai)).toBeUndefined();
  });

  it('refuses prices that are not prices when it is created', () => {
    const at = (price: object) => () =>
      createPriceCatalogue({
        prices: { m: { inputPerMillion: 1, outputPerMillion: 1, asOf: '2026-11-01', ...price } },
      });
    expect(at({ inputPerMillion: -1 })).toThrow('prices["m"]: each rate must be a number ≥ 0');
    expect(at({ outputPerMillion: Number.NaN })).toThrow('each rate must be a number ≥ 0');
    expect(at({ asOf: 'last week' })).toThrow('prices["m"].asOf must be a date');
    expect(at({ currency: 'euro' })).toThrow('ISO 4217');
  });

  it('names the catalogue release it is installed with (the date is that release’s)', () => {
    const require = createRequire(import.meta.url);
    let folder = dirname(require.resolve('@pydantic/genai-prices'));
    while (!folder.endsWith('genai-prices')) folder = dirname(folder);
    const { version } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { version: string };
    expect(catalogue.source).toBe(`@pydantic/genai-prices ${version}`);
  });
});
