import { z } from 'zod';
import { declareRoute } from '../../routes/declare-route.js';
import { assistantMessageSchema, chatBodySchema, historyBodySchema, userMessageSchema } from './chat-request.js';
import {
  conversationBranchBodySchema,
  conversationDeleteBodySchema,
  conversationListBodySchema,
  conversationUpdateBodySchema,
} from './conversation-schemas.js';

/**
 * The request header that carries a reconnect's context (a `GET` has no body): the context's JSON,
 * base64url-encoded. `@deskpilot/client`'s transport sends it; only identity matters here (`grant`,
 * or `userEmail` and `projectKey`).
 */
export const chatContextHeader = 'x-deskpilot-context';

const time = (description?: string) => z.string().meta({ format: 'date-time', description });
const uuid = z.string().meta({ format: 'uuid' });
const turnStatus = z.enum(['complete', 'aborted', 'awaiting_approval', 'budget_exhausted', 'failed']).nullable();

/** A conversation as `POST /chat/conversations/update` answers it. */
export const conversationRecordSchema = z.object({
  sessionId: uuid,
  title: z.string().nullable().meta({ description: 'Null until named, or titled from the first exchange.' }),
  status: turnStatus.meta({ description: 'How its last turn ended; null before the first.' }),
  archived: z.boolean(),
  createdAt: time(),
  updatedAt: time('The last activity: the list’s order.'),
});

/** A conversation as the list answers it: with the start of its last message. */
export const conversationListItemSchema = conversationRecordSchema.extend({
  preview: z.string().nullable().meta({ description: 'The start of the last message’s text.' }),
});

/** A conversation as `/chat/history` and `/chat/conversations/branch` answer it. */
export const historySchema = z.object({
  sessionId: uuid,
  messages: z
    .array(z.record(z.string(), z.unknown()).meta({ description: 'AI SDK UI message' }))
    .meta({ description: 'The active branch, first message first.' }),
  siblings: z.record(z.string(), z.array(z.string()).min(2)).meta({
    description:
      'For each message of `messages` that has siblings (other edits of it, other answers to the same message): all their ids, itself included, oldest first.',
  }),
  lastTurnStatus: turnStatus,
  title: z.string().nullable(),
  archived: z.boolean(),
});

/** The body of `POST /chat` as documented: every message's shape (only the last is read in full). */
const documentedChatBody = chatBodySchema(200).extend({
  messages: z
    .array(z.union([userMessageSchema(16_000), assistantMessageSchema]))
    .min(1)
    .max(200)
    .meta({
      description:
        'AI SDK UI messages; only the last is read: a new user message, an edit (with `messageId` its id: a new branch beside it), or the last assistant message with approval answers. With the `regenerate-message` trigger the question is last: a new answer beside the stored one (`messageId`, when given, names the answer to replace), or, for a question never stored, an answer as to a new message.',
    }),
});

/** What the routes on one conversation can answer, beyond a body's codes. */
const conversationErrors = [
  'unauthenticated',
  'not_found',
  'conversation_deleted',
  'rate_limited',
  'store_unavailable',
  'unavailable',
] as const;

/** The chat service's routes. */
export const chatRoutes = {
  chat: declareRoute({
    operationId: 'chat',
    method: 'POST',
    path: '/chat',
    summary: "Stream the assistant's answer: an AI SDK UI message stream (what `useChat` consumes).",
    auth: 'chat',
    body: documentedChatBody,
    answer: {
      status: 200,
      description:
        'Server-sent events: `data: <UI message chunk JSON>` per chunk, `data: [DONE]` last. `finish` is sent once the turn is saved.',
      contentType: 'text/event-stream',
      headers: ['rate-limit', 'ui-message-stream'],
    },
    errors: [
      'quota_exceeded',
      'unauthenticated',
      'forbidden',
      'conflict',
      'conversation_deleted',
      'provider_unavailable',
      'rate_limited',
      'token_budget_exceeded',
      'project_budget_exceeded',
      'budget_unpriced',
      'store_unavailable',
      'unavailable',
    ],
  }),
  chatHistory: declareRoute({
    operationId: 'chatHistory',
    method: 'POST',
    path: '/chat/history',
    summary: 'A conversation, to its owner only (an unknown id and someone else’s get the same 404).',
    auth: 'chat',
    body: historyBodySchema,
    answer: {
      status: 200,
      description: 'The stored conversation’s active branch.',
      schema: historySchema,
      headers: ['rate-limit'],
    },
    errors: conversationErrors,
  }),
  listConversations: declareRoute({
    operationId: 'listConversations',
    method: 'POST',
    path: '/chat/conversations',
    summary: 'The caller’s conversations in the project (or the archive), newest activity first, a page at a time.',
    auth: 'chat',
    body: conversationListBodySchema,
    answer: {
      status: 200,
      description: 'A page; `nextCursor` asks for the next one (null on the last page).',
      schema: z.object({ conversations: z.array(conversationListItemSchema), nextCursor: z.string().nullable() }),
      headers: ['rate-limit'],
    },
    errors: conversationErrors,
  }),
  updateConversation: declareRoute({
    operationId: 'updateConversation',
    method: 'POST',
    path: '/chat/conversations/update',
    summary: 'Rename, archive or bring back one of the caller’s conversations.',
    auth: 'chat',
    body: conversationUpdateBodySchema,
    answer: {
      status: 200,
      description: 'The conversation as it is now.',
      schema: conversationRecordSchema,
      headers: ['rate-limit'],
    },
    errors: conversationErrors,
  }),
  deleteConversation: declareRoute({
    operationId: 'deleteConversation',
    method: 'POST',
    path: '/chat/conversations/delete',
    summary:
      'Delete one of the caller’s conversations: its messages and notes go, a tombstone stays (later requests for it get 410).',
    auth: 'chat',
    body: conversationDeleteBodySchema,
    answer: { status: 204, description: 'Deleted.', headers: ['rate-limit'] },
    errors: conversationErrors,
  }),
  selectBranch: declareRoute({
    operationId: 'selectBranch',
    method: 'POST',
    path: '/chat/conversations/branch',
    summary:
      'Show another branch of one of the caller’s conversations: the one through `messageId` (a sibling `/chat/history` listed), down its newest messages. Later messages go on from there.',
    auth: 'chat',
    body: conversationBranchBodySchema,
    answer: {
      status: 200,
      description: 'The conversation with that branch active, as `/chat/history` answers it.',
      schema: historySchema,
      headers: ['rate-limit'],
    },
    errors: conversationErrors,
  }),
  resumeChat: declareRoute({
    operationId: 'resumeChat',
    method: 'GET',
    path: '/chat/:sessionId/stream',
    summary:
      'Re-attach to the conversation’s running answer (useChat `resume`): its stream from the first byte, then live; 204 when none runs.',
    auth: 'chat',
    requestHeaders: {
      [chatContextHeader]: {
        description: 'The context’s JSON, base64url-encoded (`{ grant }`, or `userEmail` and `projectKey`).',
        maxLength: 8192,
      },
    },
    answer: {
      status: 200,
      description: 'Server-sent events, as `POST /chat` sends them, from the answer’s first byte.',
      contentType: 'text/event-stream',
    },
    otherAnswer: { status: 204, description: 'No answer runs: the conversation is complete in `/chat/history`.' },
    errors: ['invalid_request', ...conversationErrors],
  }),
};
