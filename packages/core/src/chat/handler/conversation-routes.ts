import { base64url } from 'jose';
import { z } from 'zod';
import { DeskpilotError } from '../../errors/deskpilot-error.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../../http/http-request.js';
import type { RouteRequestInput } from '../../routes/route-table.js';
import type { chatRoutes } from './chat-api.js';
import type { ChatContext } from '../context/parse-chat-context.js';
import type { ChatSessionRecord, ConversationSummary, TurnStatus } from '../conversation/chat-store.js';
import type { ChatRouteDependencies } from './chat-routes.js';
import { ownConversation } from './own-conversation.js';

export {
  conversationBranchBodySchema,
  conversationDeleteBodySchema,
  conversationListBodySchema,
  conversationUpdateBodySchema,
} from './conversation-schemas.js';

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

/** The caller's context of a body read, and the admission headers (the history routes' limit). */
export async function admit<Body extends { context?: unknown }>(
  deps: ChatRouteDependencies,
  request: HttpRequest,
  read: () => Promise<Body>,
): Promise<{ body: Body; context: ChatContext; headers: Array<[string, string]> }> {
  const body = await read();
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
export async function serveConversationList(
  deps: ChatRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof chatRoutes)['listConversations']>,
): Promise<HttpResponse> {
  const { body, context, headers } = await admit(deps, request, input.body);
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
  input: RouteRequestInput<(typeof chatRoutes)['updateConversation']>,
): Promise<HttpResponse> {
  const { body, context, headers } = await admit(deps, request, input.body);
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
  input: RouteRequestInput<(typeof chatRoutes)['deleteConversation']>,
): Promise<HttpResponse> {
  const { body, context, headers } = await admit(deps, request, input.body);
  const session = await ownConversation(deps.store, body.sessionId, context);
  // Deleted by a concurrent request in between: the same outcome.
  await deps.store.deleteSession(session.id, deps.now());
  return { status: 204, headers, body: null };
}
