import { z } from 'zod';
import type { ChatContextLimits } from '../context/parse-chat-context.js';

/** Limits on what one chat request may carry. */
export interface ChatLimits extends ChatContextLimits {
  /** @default 1048576 (1 MiB) */
  maxBodyBytes?: number;
  /** Deepest nesting of arrays and objects anywhere in the body (the body itself is level 1). @default 64 */
  maxBodyDepth?: number;
  /** Messages in one request (the client sends its whole history). @default 200 */
  maxMessages?: number;
  /** Characters of text in the new user message. @default 16000 */
  maxTextLength?: number;
  /** Bytes of working memory per conversation. @default 8192 */
  workingMemoryBytes?: number;
}

/** The body of `POST /chat`, as `useChat`'s transport posts it (plus our `sessionId`, `provider`, `context`). */
export function chatBodySchema(maxMessages: number) {
  return z.object({
    messages: z.array(z.unknown()).min(1, 'At least one message is required').max(maxMessages),
    sessionId: z.uuid(),
    provider: z.enum(['openai', 'anthropic']).optional(),
    context: z.unknown().optional(),
    trigger: z.enum(['submit-message', 'regenerate-message']).optional(),
    messageId: z.string().max(200).optional(),
    id: z.string().max(200).optional(),
  });
}

/** The body of `POST /chat/history`. */
export const historyBodySchema = z.object({ sessionId: z.uuid(), context: z.unknown().optional() });

const messageId = z.string().min(1).max(200);

/** A new user message: text parts only. */
export function userMessageSchema(maxTextLength: number) {
  return z
    .object({
      id: messageId,
      role: z.literal('user'),
      // Text is valid text already: the edge refuses NUL and lone surrogates in every string of the body.
      parts: z
        .array(z.object({ type: z.literal('text'), text: z.string() }))
        .min(1)
        .max(50),
    })
    .refine((message) => message.parts.reduce((sum, part) => sum + part.text.length, 0) <= maxTextLength, {
      message: `Text must not exceed ${maxTextLength} characters`,
      path: ['parts'],
    })
    .refine((message) => message.parts.some((part) => part.text.trim() !== ''), { message: 'The message is empty', path: ['parts'] });
}

/** An assistant message sent back with approval answers. */
export const assistantMessageSchema = z.object({
  id: messageId,
  role: z.literal('assistant'),
  parts: z
    .array(z.looseObject({ type: z.string().max(100) }))
    .min(1)
    .max(200),
});
