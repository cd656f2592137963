import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { chatRouter } from '@deskpilot/chat-express';
import {
  DeskpilotError,
  createChatHandler,
  createDemoCommerceBackend,
  createDemoModel,
  createDemoTicketBackend,
  createMemoryApprovalStore,
  createMemoryChatStore,
  problemResponse,
  writeHttpResponse,
  type ChatModels,
} from '@deskpilot/core';
import express from 'express';
import type { ServerConfig } from './config.ts';

/** Models from the environment; with no key, the offline demo model answers. */
export function modelsFrom(config: ServerConfig): ChatModels & { label: string } {
  const openai = config.OPENAI_API_KEY ? createOpenAI({ apiKey: config.OPENAI_API_KEY })(config.OPENAI_MODEL) : undefined;
  const anthropic = config.ANTHROPIC_API_KEY ? createAnthropic({ apiKey: config.ANTHROPIC_API_KEY })(config.ANTHROPIC_MODEL) : undefined;
  const fallback = openai ?? anthropic ?? createDemoModel({ delayMs: config.DEMO_MODEL_DELAY_MS });
  return { openai, anthropic, fallback, label: `${fallback.provider}:${fallback.modelId}` };
}

/** Builds the chat service app: stores, demo backends, models, routes. */
export function createApp(config: ServerConfig) {
  const models = modelsFrom(config);
  const chat = createChatHandler({
    store: createMemoryChatStore(),
    approvalStore: createMemoryApprovalStore(),
    models,
    commerce: createDemoCommerceBackend(),
    tickets: createDemoTicketBackend(),
    rateLimit: { limit: config.RATE_LIMIT_MAX, windowMs: config.RATE_LIMIT_WINDOW_MS },
    stepBudget: config.STEP_BUDGET,
    contextSecret: config.CHAT_CONTEXT_SECRET,
  });
  const app = express();
  app.disable('x-powered-by');
  app.use(chatRouter(chat, { allowedOrigins: config.ALLOWED_ORIGINS }));
  app.use((_req, res) => writeHttpResponse(res, problemResponse(new DeskpilotError('not_found', { detail: 'No such route.' }))));
  return { app, models };
}
