// The page's calls to its own studio server (same origin: the session cookie rides along) and the
// reading of problem+json answers into one error type the views can explain.

/** A session as `GET /sessions/current` returns it. */
export interface Session {
  id: string;
  user: { id: string; email: string; name: string };
  projectKey: string;
  clientId: string;
  role: string;
  memberships: Array<{ projectKey: string; clientId: string; role: string }>;
  expiresAt: string;
}

/** What the studio gives the page to talk to the chat service. */
export interface ChatSetup {
  chatServiceUrl: string;
  context: Record<string, unknown> & { userEmail: string; projectKey: string; userRole: string };
}

/** A failed call: `code` is the problem's stable code, or `network` when nothing answered. */
export class StudioError extends Error {
  readonly code: string;
  readonly status: number;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: string, status: number, message: string, retryAfterSeconds?: number) {
    super(message);
    this.name = 'StudioError';
    this.code = code;
    this.status = status;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Reads a non-2xx answer (problem+json or not) as a {@link StudioError}. */
export async function errorFromResponse(response: Response, service: string): Promise<StudioError> {
  const retryAfter = Number(response.headers.get('retry-after'));
  const problem = (await response.json().catch(() => null)) as { code?: unknown; detail?: unknown } | null;
  const code = typeof problem?.code === 'string' ? problem.code : `http_${response.status}`;
  const detail = typeof problem?.detail === 'string' ? problem.detail : `The ${service} answered ${response.status}.`;
  return new StudioError(code, response.status, detail, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined);
}

/** `fetch` that turns a network failure and a non-2xx answer into a {@link StudioError}. */
export async function call(service: string, input: string, init: RequestInit = {}): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(input, init);
  } catch (cause) {
    if (init.signal?.aborted) throw cause;
    throw new StudioError('network', 0, `The ${service} is unreachable.`);
  }
  if (!response.ok) throw await errorFromResponse(response, service);
  return response;
}

const json = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** The current session, or null when signed out. */
export async function currentSession(): Promise<Session | null> {
  try {
    return (await (await call('studio', '/sessions/current')).json()) as Session;
  } catch (error) {
    if (error instanceof StudioError && error.status === 401) return null;
    throw error;
  }
}

export async function login(email: string, password: string): Promise<Session> {
  return (await (await call('studio', '/sessions', json({ email, password }))).json()) as Session;
}

export async function switchProject(projectKey: string, clientId: string): Promise<Session> {
  return (await (await call('studio', '/sessions/current/project', json({ projectKey, clientId }))).json()) as Session;
}

export async function logout(): Promise<void> {
  await call('studio', '/sessions/current', { method: 'DELETE' });
}

export async function chatSetup(): Promise<ChatSetup> {
  return (await (await call('studio', '/studio/chat-context')).json()) as ChatSetup;
}

/** The data API through the studio's identity proxy. */
export async function dataApi<T>(path: string): Promise<T> {
  return (await (await call('data API', `/api${path}`)).json()) as T;
}

/** One sentence a representative can act on, for any error the page meets. */
export function explain(error: unknown): string {
  if (!(error instanceof StudioError)) return 'Something went wrong. Try again.';
  switch (error.code) {
    case 'network':
      return `${capitalise(error.message)} Check your connection or that the service is running, then retry.`;
    case 'rate_limited':
      return `Too many requests. Try again in ${error.retryAfterSeconds ?? 'a few'} seconds.`;
    case 'unauthenticated':
      return 'Your session has ended. Sign in again.';
    case 'upstream_unavailable':
    case 'store_unavailable':
      return `${error.message} Retry in a moment.`;
    default:
      return error.message;
  }
}

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
