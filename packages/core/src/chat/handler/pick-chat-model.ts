import type { LanguageModel } from 'ai';
import { DeskpilotError } from '../../errors/deskpilot-error.js';

/** A model object (never a bare id string, which the SDK would send to its global gateway). */
export type ChatModel = Exclude<LanguageModel, string>;

/** Models by provider name; `fallback` answers when the request names no provider. */
export interface ChatModels {
  openai?: ChatModel;
  anthropic?: ChatModel;
  /** Used when no provider is requested (the reference server puts the offline demo model here). */
  fallback?: ChatModel;
}

/** Options of {@link pickChatModel}. */
export interface PickChatModelOptions {
  models: ChatModels;
  /** The provider the request names, if any. */
  provider: 'openai' | 'anthropic' | undefined;
}

/** The model that answers, or `provider_unavailable`. */
export type PickChatModelResult = { ok: true; model: ChatModel } | { ok: false; error: DeskpilotError };

/** The requested provider's model, or the fallback (then OpenAI, then Anthropic) when none is named. */
export function pickChatModel(options: PickChatModelOptions): PickChatModelResult {
  const { models, provider } = options;
  const model = provider ? models[provider] : (models.fallback ?? models.openai ?? models.anthropic);
  if (model) return { ok: true, model };
  return {
    ok: false,
    error: new DeskpilotError('provider_unavailable', {
      detail: provider ? `The ${provider} provider is not configured.` : 'No model is configured.',
    }),
  };
}
