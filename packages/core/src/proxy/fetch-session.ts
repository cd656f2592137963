import * as z from 'zod/mini';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import type { Session } from '../session/session.js';
import { sessionSchema } from '../session/session-schema.js';
import type { IncomingHeaders } from './identity-headers.js';

/** Options of {@link fetchSession}. */
export interface FetchSessionOptions {
  /** Base URL of the session service, e.g. `http://127.0.0.1:4360`. */
  sessionServiceUrl: string | URL;
  /** Name of the session cookie (`<prefix>_session`). @default "deskpilot_session" */
  cookieName?: string;
  /** Give up after this long. @default 5000 */
  timeoutMs?: number;
  /**
   * Headers of the request being served: its correlation headers (`x-request-id`, `traceparent`,
   * `tracestate`) go along, so the session service's log line and span join the caller's. Nothing else
   * of them is sent.
   */
  requestHeaders?: IncomingHeaders;
  /** @default globalThis.fetch */
  fetch?: typeof globalThis.fetch;
}

/** What ties one request's lines and spans together across services. */
const correlationHeaders = ['x-request-id', 'traceparent', 'tracestate'] as const;

/** The correlation headers of `incoming` (single values only: a repeated one is not trusted to pass on). */
function correlationOf(incoming: IncomingHeaders | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of correlationHeaders) {
    const value = incoming?.[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/**
 * Sends `GET <path>` to the session service with only the session cookie of `cookieHeader` and the
 * correlation headers of `requestHeaders`: the answer, or null when the request has no session cookie.
 * Throws `upstream_unavailable` when nothing answers.
 */
async function askSessionService(
  path: string,
  cookieHeader: string | null | undefined,
  options: FetchSessionOptions,
): Promise<Response | null> {
  const cookieName = options.cookieName ?? 'deskpilot_session';
  const cookie = (cookieHeader ?? '')
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.slice(0, pair.indexOf('=')) === cookieName)
    .join('; ');
  if (cookie === '') return null;
  try {
    return await (options.fetch ?? fetch)(new URL(path, withSlash(options.sessionServiceUrl)), {
      headers: { ...correlationOf(options.requestHeaders), cookie, accept: 'application/json' },
      signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
      redirect: 'error',
    });
  } catch (cause) {
    throw new DeskpilotError('upstream_unavailable', { detail: 'The session service is unreachable.', cause });
  }
}

/** The answer of a service that cannot give what was asked. */
async function unexpected(response: Response): Promise<DeskpilotError> {
  await response.body?.cancel().catch(() => {});
  return new DeskpilotError('upstream_unavailable', { detail: `The session service answered ${response.status}.` });
}

/** A session as the API answers it, `emailVerified` false when a service of an earlier release leaves it out. */
function sessionOf(parsed: z.infer<typeof sessionSchema>): Session {
  const { user } = parsed;
  return { ...parsed, user: { ...user, emailVerified: user.emailVerified === true } };
}

/**
 * Asks the session service who a browser request belongs to (`GET /sessions/current`), forwarding
 * only the session cookie and the request's correlation headers (see `requestHeaders`). Returns null when there is no session
 * (401); throws `upstream_unavailable` when the service cannot answer.
 */
export async function fetchSession(
  cookieHeader: string | null | undefined,
  options: FetchSessionOptions,
): Promise<Session | null> {
  const response = await askSessionService('sessions/current', cookieHeader, options);
  if (!response) return null;
  if (response.status === 401) {
    await response.body?.cancel();
    return null;
  }
  const parsed = response.ok ? sessionSchema.safeParse(await response.json().catch(() => undefined)) : undefined;
  if (!parsed?.success) throw await unexpected(response);
  return sessionOf(parsed.data);
}

const capabilitiesAnswer = z.object({ session: sessionSchema, capabilities: z.record(z.string(), z.boolean()) });

/**
 * Asks the session service for a browser request's session and its capability flags under the
 * project's role policy now (`GET /sessions/current/capabilities`, forwarded as {@link fetchSession}
 * forwards): what a studio builds each chat context from. Null when there is no session (401); throws
 * `not_found` when the service keeps no role policies (no team routes), `upstream_unavailable` when it
 * cannot answer.
 */
export async function fetchCapabilities(
  cookieHeader: string | null | undefined,
  options: FetchSessionOptions,
): Promise<{ session: Session; capabilities: Record<string, boolean> } | null> {
  const response = await askSessionService('sessions/current/capabilities', cookieHeader, options);
  if (!response) return null;
  if (response.status === 401) {
    await response.body?.cancel();
    return null;
  }
  // Only the session service's own 404 (a problem: no team routes there), never a proxy's misroute.
  if (response.status === 404 && response.headers.get('content-type')?.startsWith('application/problem+json')) {
    await response.body?.cancel();
    throw new DeskpilotError('not_found', { detail: 'The session service keeps no role policies.' });
  }
  const parsed = response.ok ? capabilitiesAnswer.safeParse(await response.json().catch(() => undefined)) : undefined;
  if (!parsed?.success) throw await unexpected(response);
  return { session: sessionOf(parsed.data.session), capabilities: parsed.data.capabilities };
}

function withSlash(url: string | URL): string {
  const text = String(url);
  return text.endsWith('/') ? text : `${text}/`;
}
