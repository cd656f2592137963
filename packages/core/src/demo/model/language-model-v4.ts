import type { LanguageModel } from 'ai';

// `ai` does not re-export the V4 provider types, and `@ai-sdk/provider` is not a direct dependency of
// @deskpilot/core: derived from `ai`'s own `LanguageModel` union, our published .d.ts files name only `ai`.

/** The AI SDK provider spec version 4 language model (`@ai-sdk/provider`'s `LanguageModelV4`). */
export type LanguageModelV4 = Extract<LanguageModel, { readonly specificationVersion: 'v4' }>;

/** Options of one model call (`LanguageModelV4CallOptions`). */
export type LanguageModelV4CallOptions = Parameters<LanguageModelV4['doStream']>[0];

/** The prompt of one model call (`LanguageModelV4Prompt`). */
export type LanguageModelV4Prompt = LanguageModelV4CallOptions['prompt'];

/** One message of a prompt (`LanguageModelV4Message`). */
export type LanguageModelV4Message = LanguageModelV4Prompt[number];

/** What `doStream` resolves to (`LanguageModelV4StreamResult`). */
export type LanguageModelV4StreamResult = Awaited<ReturnType<LanguageModelV4['doStream']>>;

/** One part of a model stream (`LanguageModelV4StreamPart`). */
export type LanguageModelV4StreamPart =
  LanguageModelV4StreamResult['stream'] extends ReadableStream<infer Part> ? Part : never;

/** What `doGenerate` resolves to (`LanguageModelV4GenerateResult`). */
export type LanguageModelV4GenerateResult = Awaited<ReturnType<LanguageModelV4['doGenerate']>>;

/** A tool result part in a prompt (`LanguageModelV4ToolResultPart`). */
export type LanguageModelV4ToolResultPart = Extract<
  Extract<LanguageModelV4Message, { role: 'tool' }>['content'][number],
  { type: 'tool-result' }
>;

/** The output of a tool result in a prompt (`LanguageModelV4ToolResultOutput`). */
export type LanguageModelV4ToolResultOutput = LanguageModelV4ToolResultPart['output'];

/** Token usage of one model call (`LanguageModelV4Usage`). */
export type LanguageModelV4Usage = Extract<LanguageModelV4StreamPart, { type: 'finish' }>['usage'];
