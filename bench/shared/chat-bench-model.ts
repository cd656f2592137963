// The model both chat servers stream from: a hand-written AI SDK `LanguageModelV4` that answers every
// call with the same text, in a fixed number of `text-delta` parts, at once or one part every few ms.
// Not `MockLanguageModelV4` from 'ai/test': that double keeps the options of every call it receives
// (`doStreamCalls`), which would grow both servers' memory with the load and blur the leak figures.
import { setTimeout as sleep } from 'node:timers/promises';
import type { LanguageModel } from 'ai';

type LanguageModelV4 = Extract<LanguageModel, { specificationVersion: 'v4' }>;
type StreamResult = Awaited<ReturnType<LanguageModelV4['doStream']>>;
type StreamPart = StreamResult['stream'] extends ReadableStream<infer Part> ? Part : never;

/** Options of {@link createBenchModel}. */
export interface BenchModelOptions {
  /** `text-delta` parts per answer. */
  textChunks: number;
  /** Pause before each `text-delta`, in milliseconds; 0 streams the whole answer at once. */
  chunkDelayMs: number;
  /**
   * Holds every answer halfway (after its first half of `text-delta` parts) until the promise it
   * returns settles: streams held open together, whatever the machine's speed. @default none
   */
  gate?: () => Promise<void>;
}

// Short words, like the tokens a provider streams.
const words = [
  ' Your',
  ' order',
  ' ORD',
  '-1001',
  ' shipped',
  ' on',
  ' Monday',
  ' and',
  ' should',
  ' arrive',
  ' within',
  ' three',
  ' days',
  '.',
];

/**
 * Creates the bench model. Each `doStream` call streams `stream-start`, `text-start`, `textChunks` ×
 * `text-delta`, `text-end` and `finish` (V4 shapes: `finishReason: { unified, raw }`, nested usage).
 * It only streams; it ignores its prompt and tools.
 */
export function createBenchModel(options: BenchModelOptions): LanguageModelV4 {
  const { textChunks, chunkDelayMs } = options;
  const finish: StreamPart = {
    type: 'finish',
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: {
      inputTokens: { total: 120, noCache: 120, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: textChunks, text: textChunks, reasoning: 0 },
    },
  };
  // Fresh part objects per call: the SDK may annotate what it receives.
  const parts = (): StreamPart[] => [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 'text-1' },
    ...Array.from({ length: textChunks }, (_, index): StreamPart => ({
      type: 'text-delta',
      id: 'text-1',
      delta: words[index % words.length]!,
    })),
    { type: 'text-end', id: 'text-1' },
    { ...finish },
  ];

  return {
    specificationVersion: 'v4',
    provider: 'bench',
    modelId: `text-${textChunks}x${chunkDelayMs}ms`,
    supportedUrls: {},
    async doGenerate() {
      throw new Error('The bench model only streams.');
    },
    async doStream({ abortSignal }) {
      const queue = parts();
      const { gate } = options;
      if (gate) {
        const half = 2 + Math.floor(textChunks / 2);
        return {
          stream: new ReadableStream<StreamPart>({
            async start(controller) {
              for (const part of queue.slice(0, half)) controller.enqueue(part);
              await gate();
              for (const part of queue.slice(half)) controller.enqueue(part);
              controller.close();
            },
          }),
        };
      }
      if (chunkDelayMs === 0) {
        return {
          stream: new ReadableStream<StreamPart>({
            start(controller) {
              for (const part of queue) controller.enqueue(part);
              controller.close();
            },
          }),
        };
      }
      let next = 0;
      return {
        stream: new ReadableStream<StreamPart>({
          // One part per pull: the SDK asks for the next part when it has taken the last one.
          async pull(controller) {
            const part = queue[next++];
            if (part === undefined) {
              controller.close();
              return;
            }
            if (part.type === 'text-delta') await sleep(chunkDelayMs, undefined, { signal: abortSignal });
            controller.enqueue(part);
          },
        }),
      };
    },
  };
}
