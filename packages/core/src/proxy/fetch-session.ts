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
 * Asks the session service who a browser request belongs to (`GET /sessions/current`), forwarding
 * only the session cookie and the request's correlation headers (see `requestHeaders`). Returns null when there is no session
 * (401); throws `upstream_unavailable` when the service cannot answer.
 */
export async function fetchSession(
  cookieHeader: string | null | undefined,
  options: FetchSessionOptions,
): Promise<Session | null> {
  const cookieName = options.cookieName ?? 'deskpilot_session';
  const cookie = (cookieHeader ?? '')
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.slice(0, pair.indexOf('=')) === cookieName)
    .join('; ');
  if (cookie === '') return null;

  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(new URL('sessions/current', withSlash(options.sessionServiceUrl)), {
      headers: { ...correlationOf(options.requestHeaders), cookie, accept: 'application/json' },
      signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
      redirect: 'error',
    });
  } catch (cause) {
    throw new DeskpilotError('upstream_unavailable', { detail: 'The session service is unreachable.', cause });
  }
  if (response.status === 401) {
    await response.body?.cancel();
    return null;
  }
  const parsed = response.ok ? sessionSchema.safeParse(await response.json().catch(() => undefined)) : undefined;
  if (!parsed?.success) {
    await response.body?.cancel().catch(() => {});
    throw new DeskpilotError('upstream_unavailable', { detail: `The session service answered ${response.status}.` });
  }
  // A session service of an earlier release does not say; its users count as not verified.
  const { user } = parsed.data;
  return { ...parsed.data, user: { ...user, emailVerified: user.emailVerified === true } };
}

function withSlash(url: string | URL): string {
  const text = String(url);
  return text.endsWith('/') ? text : `${text}/`;
}
