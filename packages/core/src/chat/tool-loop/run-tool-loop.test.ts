import type { LanguageModelV4StreamPart } from '../../demo/model/language-model-v4.js';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { textStep } from '../handler/chat.test-support.js';
import { runToolLoop } from './run-tool-loop.js';

/** A model whose one answer streams the given parts, one per pull, and records whether it was cancelled. */
function pulledModel(parts: LanguageModelV4StreamPart[]) {
  const seen = { pulled: 0, cancelled: false };
  const model = new MockLanguageModelV4({
    doStream: async () => ({
      stream: new ReadableStream<LanguageModelV4StreamPart>(
        {
          pull(controller) {
            if (seen.pulled === parts.length) controller.close();
            else controller.enqueue(parts[seen.pulled++]!);
          },
          cancel() {
            seen.cancelled = true;
          },
        },
        { highWaterMark: 0 },
      ),
    }),
  });
  return { model, seen };
}

describe('runToolLoop', () => {
  it('streams the model step and counts it', async () => {
    const { model } = pulledModel(textStep('Hello.'));
    const loop = runToolLoop({ model, instructions: 'Be brief.', messages: [{ role: 'user', content: 'hi' }], tools: {} });
    const types: string[] = [];
    for await (const part of loop.stream) types.push(part.type);
    expect(types).toEqual(['start', 'start-step', 'text-start', 'text-delta', 'text-end', 'finish-step', 'finish']);
    expect(loop.steps).toBe(1);
    expect(loop.budgetExhausted).toBe(false);
  });

  it('cancels the model stream when its reader cancels', async () => {
    const long = textStep('first');
    long.splice(3, 0, ...Array.from({ length: 50 }, () => ({ type: 'text-delta' as const, id: 't1', delta: ' more' })));
    const { model, seen } = pulledModel(long);
    const loop = runToolLoop({ model, instructions: 'Be brief.', messages: [{ role: 'user', content: 'hi' }], tools: {} });
    const reader = loop.stream.getReader();
    while ((await reader.read()).value?.type !== 'text-delta');
    await reader.cancel();
    await expect.poll(() => seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThan(long.length);
  });
});
