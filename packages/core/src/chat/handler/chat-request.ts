import { z } from 'zod';
import type { ChatContextLimits } from '../context/parse-chat-context.js';
import { leadingBytes, matchesFileSignature } from './file-signatures.js';
import type { ChatRateLimit } from './create-chat-admission.js';
import type { TokenBudgetOptions } from './token-budget.js';

/** Every bound of the chat service: request sizes, files, storage, rate limits and token budget. */
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
  /**
   * Files a user message may carry (`{ type: 'file', mediaType, url, filename? }` parts, as `useChat`
   * sends attachments): inline `data:` URLs only (the server never fetches a URL a client names), of
   * these media types, each at most `maxBytes` decoded, at most `maxFiles` per message. A file is what
   * it claims: the data URL's type is its `mediaType`, and an image or PDF starts with its format's
   * signature. SVG (which can carry scripts) is refused even when listed, unless `allowSvg`. Models
   * without vision or PDF input refuse files at the provider; `maxFiles: 0` turns attachments off.
   * @default { mediaTypes: ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf'], maxBytes: 524288, maxFiles: 4, allowSvg: false }
   */
  files?: { mediaTypes?: readonly string[]; maxBytes?: number; maxFiles?: number; allowSvg?: boolean };
  /**
   * Storage quotas, in UTF-8 bytes of the stored messages' JSON: per conversation, and per user
   * (`userEmail`, all their conversations). A new user message that would pass one is refused with
   * 413 `quota_exceeded` naming it, nothing stored; an answer is always saved (so a conversation may
   * pass its quota by the answer in flight).
   * @default { conversationBytes: 4194304 (4 MiB), userBytes: 67108864 (64 MiB) }
   */
  storage?: { conversationBytes?: number; userBytes?: number };
  /**
   * `POST /chat` requests per `userEmail` within the window: the model-cost limit (429 `rate_limited`,
   * with `Retry-After` and `RateLimit` headers that never name the user).
   * @default { policy: { limit: 20, windowMs: 60000, maxKeys: 100000 } }
   */
  user?: ChatRateLimit;
  /**
   * Admission cap per client address, checked before the per-user limit, so that one client cannot
   * spray `userEmail`s through the per-user key space (IPv6 counts per /56). Generous: many users
   * can share one address (an office behind NAT). `false` turns it off.
   * @default { policy: { limit: 10 × user limit, windowMs: user windowMs, maxKeys: 100000 } }
   */
  address?: ChatRateLimit | false;
  /**
   * Reads of `POST /chat/history` per `userEmail`, counted apart from the model-cost limit (a page load
   * is not a model call), with a cap per client address of 10 × its `limit`.
   * @default { policy: { limit: 60, windowMs: user windowMs, maxKeys: 100000 } }
   */
  history?: ChatRateLimit;
  /**
   * Requests per `userEmail` of callers outside a conversation (`handler.tools`: an agent over MCP),
   * counted apart from the page's limits so that an agent cannot use up its user's, with a cap per
   * client address of 10 × its `limit`. @default { policy: { limit: 60, windowMs: user windowMs, maxKeys: 100000 } }
   */
  tools?: ChatRateLimit;
  /**
   * Model tokens each user (`userEmail`) may use per window: once used up, `POST /chat` answers 429
   * `token_budget_exceeded` (with `Retry-After`, the window's end) before calling the model. A turn
   * let in reserves `policy.reserveTokens` at once (atomically: parallel turns at the edge let one in)
   * and settles to what it used when it ends, estimated when the provider reports none; a turn under
   * way is never cut. A conversation's title call (`titles: { model }`) counts too, and is not made
   * once the budget is used up. `limiter` shares the counts across replicas (`createRedisTokenMeter`). @default none
   */
  tokens?: TokenBudgetOptions;
}

/** The default file policy of {@link ChatLimits.files}. */
export const defaultFileLimits = {
  mediaTypes: ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf'],
  maxBytes: 512 * 1024,
  maxFiles: 4,
  allowSvg: false,
} as const;

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
    // Step-up proofs for the approvals answered in this request, by approval id (signed by the session service).
    stepUp: z
      .record(z.string().min(1).max(200), z.string().min(1).max(4096))
      .refine((proofs) => Object.keys(proofs).length <= 20, 'At most 20 step-up proofs')
      .optional(),
  });
}

/** The body of `POST /chat/history`. */
export const historyBodySchema = z.object({ sessionId: z.uuid(), context: z.unknown().optional() });

const messageId = z.string().min(1).max(200);

const textPart = z.object({ type: z.literal('text'), text: z.string() });

/** Bytes a base64 payload decodes to. */
const decodedBytes = (base64: string) =>
  Math.floor((base64.length * 3) / 4) - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0);

const dataUrl = /^data:([\w.+-]+\/[\w.+-]+);base64,[A-Za-z0-9+/]*={0,2}$/;
const svg = 'image/svg+xml';

/**
 * A file part of the allowed media types, inline as a base64 `data:` URL of at most `maxBytes`, that
 * is what it claims: its URL's type is its `mediaType`, and its leading bytes are that type's.
 */
function filePart(files: Required<NonNullable<ChatLimits['files']>>) {
  const mediaTypes = new Set(
    files.mediaTypes.map((type) => type.toLowerCase()).filter((type) => type !== svg || files.allowSvg),
  );
  const declared = (part: { mediaType: string }) => part.mediaType.toLowerCase();
  return (
    z
      .object({
        type: z.literal('file'),
        mediaType: z.string().max(100),
        filename: z.string().max(255).optional(),
        url: z.string(),
      })
      .refine((part) => declared(part) !== svg || files.allowSvg, {
        message: 'SVG files are refused: they can carry scripts (a host opts in with limits.files.allowSvg)',
        path: ['mediaType'],
      })
      // An SVG the host did not opt in to has its own message above; one it did must still be listed.
      .refine((part) => (declared(part) === svg && !files.allowSvg) || mediaTypes.has(declared(part)), {
        message: `Files must be one of: ${[...mediaTypes].join(', ')}`,
        path: ['mediaType'],
      })
      .refine((part) => dataUrl.test(part.url), {
        message: 'A file must be inline, as a base64 data: URL',
        path: ['url'],
      })
      // A client that renders `url` trusts its type, not `mediaType`: the two must agree.
      .refine((part) => !dataUrl.test(part.url) || dataUrl.exec(part.url)![1]!.toLowerCase() === declared(part), {
        message: "The data URL's type must be the file's mediaType",
        path: ['url'],
      })
      .refine(
        (part) =>
          !dataUrl.test(part.url) ||
          matchesFileSignature(declared(part), leadingBytes(part.url.slice(part.url.indexOf(',') + 1))),
        {
          message: "The file's contents are not of its mediaType",
          path: ['url'],
        },
      )
      .refine((part) => decodedBytes(part.url.slice(part.url.indexOf(',') + 1)) <= files.maxBytes, {
        message: `A file must not exceed ${files.maxBytes} bytes`,
        path: ['url'],
      })
  );
}

/** A new user message: text parts, and file parts within {@link ChatLimits.files}. */
export function userMessageSchema(maxTextLength: number, fileLimits: ChatLimits['files'] = {}) {
  const files = { ...defaultFileLimits, ...fileLimits };
  const isText = (part: { type: string }): part is z.infer<typeof textPart> => part.type === 'text';
  return z
    .object({
      id: messageId,
      role: z.literal('user'),
      // Text is valid text already: the edge refuses NUL and lone surrogates in every string of the body.
      parts: z
        .array(files.maxFiles > 0 ? z.discriminatedUnion('type', [textPart, filePart(files)]) : textPart)
        .min(1)
        .max(50),
    })
    .refine((message) => message.parts.filter((part) => part.type === 'file').length <= files.maxFiles, {
      message: `At most ${files.maxFiles} files per message`,
      path: ['parts'],
    })
    .refine(
      (message) => message.parts.filter(isText).reduce((sum, part) => sum + part.text.length, 0) <= maxTextLength,
      {
        message: `Text must not exceed ${maxTextLength} characters`,
        path: ['parts'],
      },
    )
    .refine(
      (message) => message.parts.some((part) => part.type === 'file' || (isText(part) && part.text.trim() !== '')),
      {
        message: 'The message is empty',
        path: ['parts'],
      },
    );
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
