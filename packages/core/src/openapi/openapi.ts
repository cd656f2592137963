import type { $ZodType } from 'zod/v4/core';
import {
  assistantMessageSchema,
  chatBodySchema,
  historyBodySchema,
  userMessageSchema,
} from '../chat/handler/chat-request.js';
import {
  conversationBranchBodySchema,
  conversationDeleteBodySchema,
  conversationListBodySchema,
  conversationUpdateBodySchema,
} from '../chat/handler/conversation-routes.js';
import type { ErrorCode } from '../errors/deskpilot-error.js';
import { sessionSchema } from '../session/session-schema.js';
import { sessionRoutes } from '../session/session-api.js';
import { jsonSchemaOf, openApiPaths, problemResponses as problems, problemSchema } from '../routes/route-open-api.js';
import type { RouteDeclaration } from '../routes/declare-route.js';
import { recoveryRoutes } from '../session/recovery-api.js';
import { passkeyRoutes } from '../session/passkey-api.js';
import { ssoRoutes } from '../session/sso-api.js';
import { stepUpRoutes } from '../session/step-up-api.js';
import { organizationRoutes, teamRoutes } from '../team/team-api.js';

/** An OpenAPI 3.1 document, as plain JSON. */
export type OpenApiDocument = Record<string, unknown> & { openapi: '3.1.0' };

/** Options of {@link sessionOpenApi} and {@link chatOpenApi}. */
export interface OpenApiOptions {
  /** Where the service is reached, e.g. `https://sessions.example.com`. @default none (relative) */
  serverUrl?: string;
  /** The cookie prefix (`<prefix>_session`). @default "deskpilot" */
  cookiePrefix?: string;
}

/** A request body's JSON Schema from the zod schema the handler validates it with (its input side). */
const bodySchema = (schema: $ZodType) => jsonSchemaOf(schema, 'input');

const json = (schema: unknown) => ({ 'application/json': { schema } });

function document(
  title: string,
  description: string,
  options: OpenApiOptions,
  paths: object,
  components: object,
): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: { title, version: '1', description, license: { name: 'MIT', identifier: 'MIT' } },
    ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
    paths,
    components: {
      ...components,
      schemas: { Problem: problemSchema(), ...(components as { schemas?: object }).schemas },
    },
  };
}

/** What the session handler answers any route with: a write from a foreign origin, a route's missing session. */
function sessionHandlerErrors(route: RouteDeclaration): ErrorCode[] {
  return [
    ...(route.method === 'GET' ? [] : (['cross_site_request'] as const)),
    ...(route.auth === 'session' ? (['unauthenticated'] as const) : []),
  ];
}

/** The session service's routes (`createSessionHandler`) as an OpenAPI 3.1 document, from the schemas the handler validates with. */
export function sessionOpenApi(options: OpenApiOptions = {}): OpenApiDocument {
  const cookie = [{ sessionCookie: [] }];
  const groups = [
    sessionRoutes,
    recoveryRoutes,
    passkeyRoutes,
    ssoRoutes,
    stepUpRoutes,
    teamRoutes,
    organizationRoutes,
  ];
  const paths = openApiPaths(
    groups.flatMap((group) => Object.values(group)),
    { security: { session: cookie }, handlerErrors: sessionHandlerErrors },
  );
  const components = {
    securitySchemes: {
      sessionCookie: { type: 'apiKey', in: 'cookie', name: `${options.cookiePrefix ?? 'deskpilot'}_session` },
    },
    schemas: { Session: jsonSchemaOf(sessionSchema, 'output') },
  };
  const description =
    'Sign-in, cookie sessions and the active project. State-changing requests must carry an allowed `Origin` (CSRF).';
  return document('Deskpilot session service', description, options, paths, components);
}

const turnStatus = { enum: ['complete', 'aborted', 'awaiting_approval', 'budget_exhausted', 'failed', null] };

/** What the routes on one conversation can answer. */
const conversationCodes: readonly ErrorCode[] = [
  'invalid_request',
  'invalid_json',
  'payload_too_large',
  'unsupported_media_type',
  'unauthenticated',
  'not_found',
  'conversation_deleted',
  'rate_limited',
  'store_unavailable',
  'unavailable',
];

/** A conversation as the conversation routes answer it (`preview` in the list only). */
function conversationSchema(withPreview: boolean) {
  const time = { type: 'string', format: 'date-time' };
  return {
    type: 'object',
    required: [
      'sessionId',
      'title',
      'status',
      'archived',
      'createdAt',
      'updatedAt',
      ...(withPreview ? ['preview'] : []),
    ],
    properties: {
      sessionId: { type: 'string', format: 'uuid' },
      title: { type: ['string', 'null'], description: 'Null until named, or titled from the first exchange.' },
      ...(withPreview
        ? { preview: { type: ['string', 'null'], description: 'The start of the last message’s text.' } }
        : {}),
      status: { ...turnStatus, description: 'How its last turn ended; null before the first.' },
      archived: { type: 'boolean' },
      createdAt: time,
      updatedAt: { ...time, description: 'The last activity: the list’s order.' },
    },
  };
}

/** A conversation as `/chat/history` and `/chat/conversations/branch` answer it. */
const historySchema = {
  type: 'object',
  required: ['sessionId', 'messages', 'siblings', 'lastTurnStatus', 'title', 'archived'],
  properties: {
    sessionId: { type: 'string', format: 'uuid' },
    messages: {
      type: 'array',
      items: { type: 'object', description: 'AI SDK UI message' },
      description: 'The active branch, first message first.',
    },
    siblings: {
      type: 'object',
      additionalProperties: { type: 'array', items: { type: 'string' }, minItems: 2 },
      description:
        'For each message of `messages` that has siblings (other edits of it, other answers to the same message): all their ids, itself included, oldest first.',
    },
    lastTurnStatus: turnStatus,
    title: { type: ['string', 'null'] },
    archived: { type: 'boolean' },
  },
};

/** `/chat/conversations` and its `/update`, `/branch` and `/delete`. */
function conversationPaths(rateLimit: Record<string, unknown>) {
  const route = (operationId: string, summary: string, body: $ZodType, answer: Record<string, unknown>) => ({
    post: {
      operationId,
      summary,
      requestBody: { required: true, content: json(bodySchema(body)) },
      responses: { ...answer, ...problems(conversationCodes) },
    },
  });
  return {
    '/chat/conversations': route(
      'listConversations',
      'The caller’s conversations in the project (or the archive), newest activity first, a page at a time.',
      conversationListBodySchema,
      {
        '200': {
          description: 'A page; `nextCursor` asks for the next one (null on the last page).',
          headers: rateLimit,
          content: json({
            type: 'object',
            required: ['conversations', 'nextCursor'],
            properties: {
              conversations: { type: 'array', items: conversationSchema(true) },
              nextCursor: { type: ['string', 'null'] },
            },
          }),
        },
      },
    ),
    '/chat/conversations/update': route(
      'updateConversation',
      'Rename, archive or bring back one of the caller’s conversations.',
      conversationUpdateBodySchema,
      {
        '200': {
          description: 'The conversation as it is now.',
          headers: rateLimit,
          content: json(conversationSchema(false)),
        },
      },
    ),
    '/chat/{sessionId}/stream': {
      get: {
        operationId: 'resumeChat',
        summary:
          'Re-attach to the conversation’s running answer (useChat `resume`): its stream from the first byte, then live; 204 when none runs.',
        parameters: [
          { name: 'sessionId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
          {
            name: 'x-deskpilot-context',
            in: 'header',
            required: false,
            description: 'The context’s JSON, base64url-encoded (`{ grant }`, or `userEmail` and `projectKey`).',
            schema: { type: 'string', maxLength: 8192 },
          },
        ],
        responses: {
          '200': {
            description: 'Server-sent events, as `POST /chat` sends them, from the answer’s first byte.',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          '204': { description: 'No answer runs: the conversation is complete in `/chat/history`.' },
          ...problems(conversationCodes),
        },
      },
    },
    '/chat/conversations/branch': route(
      'selectBranch',
      'Show another branch of one of the caller’s conversations: the one through `messageId` (a sibling `/chat/history` listed), down its newest messages. Later messages go on from there.',
      conversationBranchBodySchema,
      {
        '200': {
          description: 'The conversation with that branch active, as `/chat/history` answers it.',
          headers: rateLimit,
          content: json(historySchema),
        },
      },
    ),
    '/chat/conversations/delete': route(
      'deleteConversation',
      'Delete one of the caller’s conversations: its messages and notes go, a tombstone stays (later requests for it get 410).',
      conversationDeleteBodySchema,
      { '204': { description: 'Deleted.', headers: rateLimit } },
    ),
  };
}

/** The chat service's routes (`createChatHandler`) as an OpenAPI 3.1 document, from the schemas the handler validates with. */
export function chatOpenApi(options: OpenApiOptions = {}): OpenApiDocument {
  const message = { oneOf: [bodySchema(userMessageSchema(16_000)), bodySchema(assistantMessageSchema)] };
  const chatBody = bodySchema(chatBodySchema(200)) as { properties: Record<string, unknown> };
  chatBody.properties.messages = {
    type: 'array',
    minItems: 1,
    maxItems: 200,
    items: message,
    description:
      'AI SDK UI messages; only the last is read: a new user message, an edit (with `messageId` its id: a new branch beside it), or the last assistant message with approval answers. With the `regenerate-message` trigger the question is last: a new answer beside the stored one (`messageId`, when given, names the answer to replace), or, for a question never stored, an answer as to a new message.',
  };
  const rateLimit = { 'RateLimit-Policy': { schema: { type: 'string' } }, RateLimit: { schema: { type: 'string' } } };
  const paths = {
    '/chat': {
      post: {
        operationId: 'chat',
        summary: "Stream the assistant's answer: an AI SDK UI message stream (what `useChat` consumes).",
        requestBody: { required: true, content: json(chatBody) },
        responses: {
          '200': {
            description:
              'Server-sent events: `data: <UI message chunk JSON>` per chunk, `data: [DONE]` last. `finish` is sent once the turn is saved.',
            headers: { ...rateLimit, 'x-vercel-ai-ui-message-stream': { schema: { type: 'string', const: 'v1' } } },
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          ...problems([
            'invalid_request',
            'invalid_json',
            'payload_too_large',
            'quota_exceeded',
            'unsupported_media_type',
            'unauthenticated',
            'forbidden',
            'conflict',
            'conversation_deleted',
            'provider_unavailable',
            'rate_limited',
            'token_budget_exceeded',
            'store_unavailable',
            'unavailable',
          ]),
        },
      },
    },
    '/chat/history': {
      post: {
        operationId: 'chatHistory',
        summary: 'A conversation, to its owner only (an unknown id and someone else’s get the same 404).',
        requestBody: { required: true, content: json(bodySchema(historyBodySchema)) },
        responses: {
          '200': {
            description: 'The stored conversation’s active branch.',
            headers: rateLimit,
            content: json(historySchema),
          },
          ...problems(conversationCodes),
        },
      },
    },
    ...conversationPaths(rateLimit),
  };
  const description =
    'Assistant chat. Identity comes from `context` (a signed `context.grant` when the service has a context secret) or from the host session (`resolveContext`).';
  return document('Deskpilot chat service', description, options, paths, {});
}
