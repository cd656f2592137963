import { createHash } from 'node:crypto';
import type { LanguageModel } from 'ai';

// `ai` does not re-export the V4 provider types: derived from its own `LanguageModel` union.
/** An AI SDK provider spec version 4 language model: what every provider of AI SDK 7 makes. */
export type LanguageModelV4 = Extract<LanguageModel, { readonly specificationVersion: 'v4' }>;
type CallOptions = Parameters<LanguageModelV4['doStream']>[0];
type StreamResult = Awaited<ReturnType<LanguageModelV4['doStream']>>;
type StreamPart = StreamResult['stream'] extends ReadableStream<infer Part> ? Part : never;

/**
 * A model's recorded calls: each call's stream, by a digest of what it was sent (the prompt, the
 * tools offered, the tool choice). JSON: keep it beside the tests as a model's transcript.
 */
export interface EvalFixtures {
  version: 1;
  /** The model they were recorded from (`provider:modelId`). */
  model: string;
  /** Each prompt's calls, in the order they were made (two scenarios may send one prompt). */
  calls: Record<string, StreamPart[][]>;
}

/** An empty set of fixtures for `model`. */
export const emptyFixtures = (model: string): EvalFixtures => ({ version: 1, model, calls: {} });

/** Approval ids are random per run: in a prompt they are placeholders, so a replay finds its call. */
const randomIds = /^apv_[\w-]+$/;

/** The digest of a call: its prompt (approval ids as placeholders), the tools offered and the tool choice. */
export function callKey(options: Pick<CallOptions, 'prompt' | 'tools' | 'toolChoice'>): string {
  const ids = new Map<string, string>();
  const prompt = JSON.stringify(options.prompt, (_key, value: unknown) => {
    if (typeof value !== 'string' || !randomIds.test(value)) return value;
    if (!ids.has(value)) ids.set(value, `apv_${ids.size}`);
    return ids.get(value);
  });
  // The tools as the model sees them: a changed description or schema is a changed prompt.
  const tools = (options.tools ?? []).map((tool) => JSON.stringify(tool)).sort();
  return createHash('sha256')
    .update(JSON.stringify([prompt, tools, options.toolChoice ?? null]))
    .digest('base64url');
}

/**
 * `model`, its every streamed call recorded into `fixtures` (by {@link callKey}) as it passes through:
 * run a suite against a real provider once, save the fixtures, and replay them offline.
 */
export function recordingModel(model: LanguageModelV4, fixtures: EvalFixtures): LanguageModelV4 {
  return {
    ...model,
    specificationVersion: 'v4',
    provider: model.provider,
    modelId: model.modelId,
    supportedUrls: model.supportedUrls,
    doGenerate: (options) => model.doGenerate(options),
    async doStream(options) {
      const result = await model.doStream(options);
      const parts: StreamPart[] = [];
      const key = callKey(options);
      const recorded = result.stream.pipeThrough(
        new TransformStream<StreamPart, StreamPart>({
          transform(part, controller) {
            parts.push(part);
            controller.enqueue(part);
          },
          flush() {
            (fixtures.calls[key] ??= []).push(parts);
          },
        }),
      );
      return { ...result, stream: recorded };
    },
  };
}

/** A recorded part as the SDK expects it: a copy, its timestamp a `Date` again after a trip through JSON. */
function revived(part: StreamPart): StreamPart {
  const copy = structuredClone(part) as StreamPart & { timestamp?: unknown };
  if (copy.type === 'response-metadata' && typeof copy.timestamp === 'string')
    return { ...copy, timestamp: new Date(copy.timestamp) } as StreamPart;
  return copy;
}

/**
 * A model that answers each call with the stream recorded for it (`recordingModel`), offline and
 * deterministic: a kept transcript as a regression test. A call it has no recording of fails, naming
 * why (the prompt or the tools changed since).
 */
export function replayingModel(fixtures: EvalFixtures): LanguageModelV4 {
  const [provider, ...rest] = fixtures.model.split(':');
  // Each prompt's recordings are played in turn.
  const played = new Map<string, number>();
  return {
    specificationVersion: 'v4',
    provider: provider ?? 'replay',
    modelId: rest.join(':') || 'replay',
    supportedUrls: {},
    async doGenerate() {
      throw new Error('A replayed model only streams (the chat handler streams every call).');
    },
    async doStream(options) {
      const key = callKey(options);
      const turn = played.get(key) ?? 0;
      played.set(key, turn + 1);
      const recordings = fixtures.calls[key];
      const parts = recordings?.[Math.min(turn, recordings.length - 1)];
      if (!parts)
        throw new Error(
          `No recorded call of ${fixtures.model} for this prompt: the scenario, the instructions or the tools changed since it was recorded. Record it again.`,
        );
      return {
        stream: new ReadableStream<StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(revived(part));
            controller.close();
          },
        }),
      };
    },
  };
}
