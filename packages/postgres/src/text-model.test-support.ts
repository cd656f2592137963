import { MockLanguageModelV4 } from 'ai/test';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** A model that answers every turn with one line of text (15 tokens, as reported). */
export const textModel = (text = 'Order ORD-1001 has shipped.') =>
  new MockLanguageModelV4({
    doStream: async () =>
      ({
        stream: new ReadableStream({
          start(controller) {
            for (const part of [
              { type: 'stream-start', warnings: [] },
              { type: 'text-start', id: 't' },
              { type: 'text-delta', id: 't', delta: text },
              { type: 'text-end', id: 't' },
              { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
            ])
              controller.enqueue(part);
            controller.close();
          },
        }),
      }) as never,
  });
