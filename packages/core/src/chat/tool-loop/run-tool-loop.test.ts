import type { LanguageModelV4StreamPart } from '../../demo/model/language-model-v4.js';
import { APICallError, simulateReadableStream, tool } from 'ai';
import { z } from 'zod';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { textStep } from '../handler/chat.test-support.js';
import { ModelTimeoutError, runToolLoop } from './run-tool-loop.js';

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
    const loop = runToolLoop({
      model,
      instructions: 'Be brief.',
      messages: [{ role: 'user', content: 'hi' }],
      tools: {},
    });
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
    const loop = runToolLoop({
      model,
      instructions: 'Be brief.',
      messages: [{ role: 'user', content: 'hi' }],
      tools: {},
    });
    const reader = loop.stream.getReader();
    while ((await reader.read()).value?.type !== 'text-delta');
    await reader.cancel();
    await expect.poll(() => seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThan(long.length);
  });
});

describe('runToolLoop: bounds of a model call', () => {
  /** A model that fails its first `failures` attempts with a retryable error asking for `retryAfterMs`, then answers. */
  function flakyModel(failures: number, retryAfterMs: number) {
    let attempts = 0;
    const model = new MockLanguageModelV4({
      doStream: async () => {
        if (attempts++ < failures) {
          throw new APICallError({
            message: 'overloaded',
            url: 'http://provider.test/v1/chat',
            requestBodyValues: {},
            statusCode: 503,
            responseHeaders: { 'retry-after-ms': String(retryAfterMs) },
            isRetryable: true,
          });
        }
        return { stream: simulateReadableStream({ chunks: textStep('Answered.'), chunkDelayInMs: null }) };
      },
    });
    return { model, attempts: () => attempts };
  }
  const run = async (loop: ReturnType<typeof runToolLoop>) => {
    const parts: Array<{ type: string; error?: unknown }> = [];
    for await (const part of loop.stream) parts.push(part);
    return parts;
  };

  it('does not count the wait before a retry as silence: 2 retries, each waited longer than the idle timeout, make 3 calls', async () => {
    const { model, attempts } = flakyModel(2, 400);
    const loop = runToolLoop({
      model,
      instructions: 'x',
      messages: [{ role: 'user', content: 'hi' }],
      tools: {},
      modelCall: { idleTimeoutMs: 250, maxRetries: 2 },
    });
    const parts = await run(loop);
    expect(attempts()).toBe(3);
    expect(parts.map((part) => part.type)).toContain('text-delta');
    expect(loop.failed).toBe(false);
  });

  it('still ends a call that goes silent after a retry', async () => {
    let attempts = 0;
    const model = new MockLanguageModelV4({
      doStream: async () => {
        if (attempts++ === 0)
          throw new APICallError({
            message: 'busy',
            url: 'u',
            requestBodyValues: {},
            statusCode: 429,
            responseHeaders: { 'retry-after-ms': '100' },
            isRetryable: true,
          });
        return {
          stream: new ReadableStream<LanguageModelV4StreamPart>({
            start: (controller) => controller.enqueue({ type: 'stream-start', warnings: [] }),
          }),
        };
      },
    });
    const loop = runToolLoop({
      model,
      instructions: 'x',
      messages: [{ role: 'user', content: 'hi' }],
      tools: {},
      modelCall: { idleTimeoutMs: 150, maxRetries: 2 },
    });
    const parts = await run(loop);
    expect(attempts).toBe(2);
    expect(parts.find((part) => part.type === 'error')?.error).toBeInstanceOf(ModelTimeoutError);
    expect(loop.failed).toBe(true);
  });

  it('ends a call past its deadline even while it keeps talking, retries and waits included', async () => {
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: [
            { type: 'stream-start', warnings: [] },
            { type: 'text-start', id: 't' },
            ...Array.from({ length: 100 }, () => ({ type: 'text-delta' as const, id: 't', delta: 'more ' })),
            { type: 'text-end', id: 't' },
            ...textStep('').slice(-1),
          ],
          chunkDelayInMs: 20,
        }),
      }),
    });
    const loop = runToolLoop({
      model,
      instructions: 'x',
      messages: [{ role: 'user', content: 'hi' }],
      tools: {},
      modelCall: { idleTimeoutMs: 1_000, callDeadlineMs: 300 },
    });
    const parts = await run(loop);
    const error = parts.find((part) => part.type === 'error')?.error as Error;
    expect(error).toBeInstanceOf(ModelTimeoutError);
    expect(error.message).toMatch(/deadline/);
    expect(loop.failed).toBe(true);
  });
});

describe('runToolLoop: a call deadline is the model call only', () => {
  it('does not count a slow tool that runs after the model answered against the call deadline', async () => {
    let calls = 0;
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks:
            calls++ === 0
              ? [
                  { type: 'stream-start', warnings: [] },
                  { type: 'tool-call', toolCallId: 'c1', toolName: 'slow', input: '{}' },
                  {
                    ...(textStep('').at(-1) as Extract<LanguageModelV4StreamPart, { type: 'finish' }>),
                    finishReason: { unified: 'tool-calls', raw: 'tool_use' },
                  },
                ]
              : textStep('Done.'),
          chunkDelayInMs: null,
        }),
      }),
    });
    const slow = tool({
      inputSchema: z.object({}),
      execute: async () => (await new Promise((resolve) => setTimeout(resolve, 400)), 'ok'),
    });
    const loop = runToolLoop({
      model,
      instructions: 'x',
      messages: [{ role: 'user', content: 'hi' }],
      tools: { slow },
      modelCall: { callDeadlineMs: 200 },
    });
    const parts: Array<{ type: string }> = [];
    for await (const part of loop.stream) parts.push(part);
    expect(parts.map((part) => part.type)).not.toContain('error');
    expect(loop.failed).toBe(false);
    expect(calls).toBe(2);
  });
});
