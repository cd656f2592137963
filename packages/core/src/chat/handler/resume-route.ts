import { UI_MESSAGE_STREAM_HEADERS } from 'ai';
import { base64url } from 'jose';
import { z } from 'zod';
import { DeskpilotError } from '../../errors/deskpilot-error.js';
import type { HttpRequest, HttpResponse } from '../../http/http-request.js';
import type { ChatRouteDependencies } from './chat-routes.js';
import { ownConversation } from './own-conversation.js';

import { chatContextHeader } from './chat-api.js';

export { chatContextHeader } from './chat-api.js';

/** The longest context header taken (encoded). */
const maxHeaderLength = 8 * 1024;

/** The route of a reconnect: `/chat/<sessionId>/stream`, as the AI SDK's transport asks by default. */
export const resumePath = /^\/chat\/([^/]+)\/stream$/;

/** The context a reconnect carries in {@link chatContextHeader}; undefined when it carries none. */
function contextOf(request: HttpRequest): unknown {
  const header = request.headers.get(chatContextHeader);
  if (header === null) return undefined;
  const refuse = () =>
    new DeskpilotError('invalid_request', {
      detail: `The ${chatContextHeader} header is not a base64url-encoded JSON context.`,
      errors: [{ path: chatContextHeader, message: 'Not a base64url-encoded JSON object' }],
    });
  if (header.length > maxHeaderLength) throw refuse();
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(base64url.decode(header)));
  } catch {
    throw refuse();
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw refuse();
  return value;
}

/**
 * A turn whose producer is gone (its process died): recorded `aborted`, its mark cleared — unless its
 * answer was saved (a producer only cut off from Redis for longer than its lease saves it all the same):
 * an answer on the active branch begun at or after the turn's start (its id starts with that time) is
 * this turn's. A producer that saves after this overwrites the status.
 */
export async function recordAbandoned(deps: ChatRouteDependencies, sessionId: string, turnId: string): Promise<void> {
  try {
    const startedAt = Number(turnId.slice(0, turnId.indexOf('-')));
    const saved =
      Number.isSafeInteger(startedAt) &&
      (await deps.store.getMessages(sessionId)).some(
        (message) =>
          message.role === 'assistant' &&
          typeof message.metadata === 'object' &&
          message.metadata !== null &&
          Number((message.metadata as { createdAt?: unknown }).createdAt) >= startedAt,
      );
    if (!saved) await deps.store.updateSession(sessionId, { lastTurnStatus: 'aborted', updatedAt: deps.now() });
    await deps.store.clearRunningTurn?.(sessionId, turnId);
  } catch (error) {
    deps.onError(error);
  }
}

/**
 * `GET /chat/:sessionId/stream`: the conversation's running answer, from its first byte, then live
 * (the AI SDK's `resume`); 204 when none runs. Its owner only, under the history routes' limit.
 */
export async function serveResume(deps: ChatRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  let raw = '';
  try {
    raw = decodeURIComponent(resumePath.exec(request.path)?.[1] ?? '');
  } catch {
    // A malformed escape: no such conversation.
  }
  const sessionId = z.uuid().safeParse(raw);
  if (!sessionId.success) throw new DeskpilotError('not_found', { detail: 'No such conversation.' });
  const resolved = await deps.resolveContext(contextOf(request), request);
  if (!resolved.ok) throw resolved.error;
  const admission = await deps.historyAdmission.admit(request, resolved.context.userEmail);
  if (!admission.allowed) throw admission.error;
  const session = await ownConversation(deps.store, sessionId.data, resolved.context);
  const headers: Array<[string, string]> = [...Object.entries(admission.headers), ['cache-control', 'no-store']];
  const stream = deps.resumableStreams
    ? await deps.resumableStreams.resume(session.id, {
        // Its producer died mid-answer (its lease lapsed): the turn is recorded as cut, here.
        onAbandoned: (turnId) => void recordAbandoned(deps, session.id, turnId),
      })
    : null;
  if (!stream) return { status: 204, headers, body: null };
  return {
    status: 200,
    headers: [
      // Identity comes from a header or a cookie: no cache may keep it.
      ...Object.entries({ ...UI_MESSAGE_STREAM_HEADERS, 'cache-control': 'no-store, no-transform' }),
      ...Object.entries(admission.headers),
    ],
    body: stream,
  };
}
