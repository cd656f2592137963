import { base64url } from 'jose';
import { z } from 'zod';
import { DeskpilotError } from '../../errors/deskpilot-error.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../../http/http-request.js';
import { readJsonBody } from '../../http/read-json-body.js';
import { validText } from '../../validation/input-schemas.js';
import { parseWithSchema } from '../../validation/parse-with-schema.js';
import type { ChatContext } from '../context/parse-chat-context.js';
import type { ChatSessionRecord, ConversationSummary, TurnStatus } from '../conversation/chat-store.js';
import type { ChatRouteDependencies } from './chat-routes.js';
import { ownConversation } from './own-conversation.js';

/** A conversation as `POST /chat/conversations/update` answers it. */
export interface ConversationRecordJson {
  sessionId: string;
  /** Null until the user names it or a title is made from the first exchange. */
  title: string | null;
  /** How its last turn ended (`awaiting_approval`: a card waits for an answer); null before the first. */
  status: TurnStatus | null;
  archived: boolean;
  createdAt: string;
  /** The last activity: what the list is ordered by. */
  updatedAt: string;
}

/** A conversation as the list answers it: with the start of its last message. */
export interface ConversationJson extends ConversationRecordJson {
  /** The start of the last message's text (whitespace collapsed), null when it has none. */
  preview: string | null;
}

/** A conversation record's JSON: dates as ISO strings. */
export function conversationRecordJson(session: ChatSessionRecord): ConversationRecordJson {
  return {
    sessionId: session.id,
    title: session.title,
    status: session.lastTurnStatus,
    archived: session.archivedAt !== null,
    createdAt: new Date(session.createdAt).toISOString(),
    updatedAt: new Date(session.updatedAt).toISOString(),
  };
}

/** Characters of a preview. */
const previewLength = 120;

/** A listed conversation's JSON, the preview cut to {@link previewLength} characters. */
export function conversationJson(summary: ConversationSummary): ConversationJson {
  const text = summary.lastMessageText?.replace(/\s+/gu, ' ').trim() ?? '';
  const characters = Array.from(text);
  const preview =
    text === ''
      ? null
      : characters.length > previewLength
        ? `${characters.slice(0, previewLength - 1).join('')}…`
        : text;
  return { ...conversationRecordJson(summary.session), preview };
}

const context = z.unknown().optional();

/** The body of `POST /chat/conversations`. */
export const conversationListBodySchema = z.strictObject({
  context,
  /** The archive instead of the list. */
  archived: z.boolean().optional(),
  /** `nextCursor` of the page before. */
  cursor: z.string().max(400).optional(),
  limit: z.int().min(1).max(100).optional(),
});

/** A title a person gives: trimmed, 1 to 120 characters of valid text. */
const titleSchema = validText()
  .trim()
  .min(1, 'A title cannot be empty')
  .max(120)
  .refine((title) => !/[\u0000-\u001f\u007f]/u.test(title), 'A title is one line of text');

/** The body of `POST /chat/conversations/update`: a new title, or archive/unarchive, or both. */
export const conversationUpdateBodySchema = z
  .strictObject({ context, sessionId: z.uuid(), title: titleSchema.optional(), archived: z.boolean().optional() })
  .refine((body) => body.title !== undefined || body.archived !== undefined, {
    message: 'Give a title, archived, or both',
  });

/** The body of `POST /chat/conversations/branch`: the message whose branch becomes the active one. */
export const conversationBranchBodySchema = z.strictObject({
  context,
  sessionId: z.uuid(),
  messageId: z.string().min(1).max(200),
});

/** The body of `POST /chat/conversations/delete`. */
export const conversationDeleteBodySchema = z.strictObject({ context, sessionId: z.uuid() });

/** The cursor of the page after `summary`: opaque to clients, its position in the list's order. */
const cursorAfter = (summary: ConversationSummary) =>
  base64url.encode(JSON.stringify([summary.session.updatedAt, summary.session.id]));

/** The position a cursor names; a cursor a client made up or altered is a 400. */
function positionOf(cursor: string): { updatedAt: number; id: string } {
  let position: unknown;
  try {
    position = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(base64url.decode(cursor)));
  } catch {
    position = undefined;
  }
  const parsed = z.tuple([z.int().min(0), z.uuid()]).safeParse(position);
  if (!parsed.success)
    throw new DeskpilotError('invalid_request', {
      detail: 'The cursor is not one this service gave.',
      errors: [{ path: 'cursor', message: 'Not a cursor of this list' }],
    });
  return { updatedAt: parsed.data[0], id: parsed.data[1] };
}

/** The body read with `schema`, the caller's context, and the admission headers (the history routes' limit). */
export async function admit<Schema extends z.ZodType<{ context?: unknown }>>(
  deps: ChatRouteDependencies,
  request: HttpRequest,
  schema: Schema,
): Promise<{ body: z.infer<Schema>; context: ChatContext; headers: Array<[string, string]> }> {
  const body = parseWithSchema(
    schema,
    await readJsonBody(request, deps.bodyLimits.maxBytes, { maxDepth: deps.bodyLimits.maxDepth }),
  );
  const resolved = await deps.resolveContext(body.context, request);
  if (!resolved.ok) throw resolved.error;
  // Managing conversations costs no model call: the history reads' limit.
  const admission = await deps.historyAdmission.admit(request, resolved.context.userEmail);
  if (!admission.allowed) throw admission.error;
  return {
    body,
    context: resolved.context,
    headers: [...Object.entries(admission.headers), ['cache-control', 'no-store']],
  };
}

/** `POST /chat/conversations`: a page of the caller's conversations in the project, newest activity first. */
export async function serveConversationList(deps: ChatRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const { body, context, headers } = await admit(deps, request, conversationListBodySchema);
  const limit = body.limit ?? 20;
  // One more than the page: whether there is a next page, without a count.
  const found = await deps.store.listSessions({
    userEmail: context.userEmail,
    projectKey: context.projectKey,
    archived: body.archived ?? false,
    limit: limit + 1,
    after: body.cursor === undefined ? undefined : positionOf(body.cursor),
  });
  const page = found.slice(0, limit);
  return jsonResponse(
    200,
    {
      conversations: page.map(conversationJson),
      nextCursor: found.length > limit ? cursorAfter(page.at(-1)!) : null,
    },
    headers,
  );
}

/** `POST /chat/conversations/update`: renames, archives or brings back one of the caller's conversations. */
export async function serveConversationUpdate(
  deps: ChatRouteDependencies,
  request: HttpRequest,
): Promise<HttpResponse> {
  const { body, context, headers } = await admit(deps, request, conversationUpdateBodySchema);
  const session = await ownConversation(deps.store, body.sessionId, context);
  const archivedAt =
    body.archived === undefined ? undefined : body.archived ? (session.archivedAt ?? deps.now()) : null;
  const updated = await deps.store.updateConversation(session.id, {
    ...(body.title === undefined ? {} : { title: body.title }),
    ...(archivedAt === undefined ? {} : { archivedAt }),
  });
  if (!updated) throw new DeskpilotError('conversation_deleted', { detail: 'This conversation was deleted.' });
  return jsonResponse(200, conversationRecordJson(updated), headers);
}

/** `POST /chat/conversations/delete`: deletes one of the caller's conversations (a tombstone stays). */
export async function serveConversationDelete(
  deps: ChatRouteDependencies,
  request: HttpRequest,
): Promise<HttpResponse> {
  const { body, context, headers } = await admit(deps, request, conversationDeleteBodySchema);
  const session = await ownConversation(deps.store, body.sessionId, context);
  // Deleted by a concurrent request in between: the same outcome.
  await deps.store.deleteSession(session.id, deps.now());
  return { status: 204, headers, body: null };
}
