import {
  DeskpilotError,
  capabilitiesOf,
  defaultRolePolicy,
  fetchSession,
  signChatGrant,
  type Session,
} from '@deskpilot/core';

/**
 * Capability flags for a role under the built-in policy: for a session service that keeps no role
 * policies (its `GET /sessions/current/capabilities` answers 404). Every read, the role's writes; a role
 * the policy does not name gets no write at all.
 */
export function capabilitiesFor(role: string): Record<string, boolean> {
  return capabilitiesOf(defaultRolePolicy, role);
}

/** The demo projects name their storefront type last (`acme-b2b`); anything else is b2c. */
export function businessTypeOf(projectKey: string): 'b2c' | 'b2b' {
  return projectKey.endsWith('-b2b') ? 'b2b' : 'b2c';
}

/** The `context` the page sends with each chat request, built from the session the studio trusts. */
export interface PageChatContext extends Record<string, unknown> {
  userEmail: string;
  userRole: string;
  projectKey: string;
  businessType: 'b2c' | 'b2b';
  /** Present when the chat service requires signed grants. */
  grant?: string;
}

/**
 * Builds the page's chat context from a session and its flags (the project's role policy, as the session
 * service answers it per request). With a secret, adds a grant (5 minutes) that the chat service then
 * trusts instead of the body's identity and flags.
 */
export async function chatContextFor(
  session: Session,
  secret?: string,
  capabilities: Record<string, boolean> = capabilitiesFor(session.role),
): Promise<PageChatContext> {
  const identity = {
    userEmail: session.user.email,
    userRole: session.role,
    projectKey: session.projectKey,
    businessType: businessTypeOf(session.projectKey),
  };
  if (!secret) return { ...identity, ...capabilities };
  // Bound to the session: a chat service that sees the session store refuses it once the session ends.
  const grant = await signChatGrant({ ...identity, capabilities, sessionId: session.id }, secret, {
    expiresInSeconds: 300,
  });
  return { ...identity, ...capabilities, grant };
}

/**
 * The session of a browser request and its capability flags under its project's role policy now, in
 * one call to the session service (`GET /sessions/current/capabilities`, only the session cookie and
 * the correlation headers passed on); null when signed out. A session service without team
 * administration (404) answers the session alone, and the built-in policy applies.
 */
export async function fetchChatIdentity(
  cookieHeader: string | undefined,
  options: {
    sessionServiceUrl: string;
    cookieName: string;
    requestHeaders: Record<string, string | string[] | undefined>;
  },
): Promise<{ session: Session; capabilities: Record<string, boolean> } | null> {
  const cookie = (cookieHeader ?? '')
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.slice(0, pair.indexOf('=')) === options.cookieName)
    .join('; ');
  if (cookie === '') return null;
  const correlation = Object.fromEntries(
    ['x-request-id', 'traceparent', 'tracestate'].flatMap((name) => {
      const value = options.requestHeaders[name];
      return typeof value === 'string' ? [[name, value]] : [];
    }),
  );
  let response: Response;
  try {
    response = await fetch(new URL('/sessions/current/capabilities', options.sessionServiceUrl), {
      headers: { ...correlation, cookie, accept: 'application/json' },
      signal: AbortSignal.timeout(5_000),
      redirect: 'error',
    });
  } catch (cause) {
    throw new DeskpilotError('upstream_unavailable', { detail: 'The session service is unreachable.', cause });
  }
  if (response.status === 401) return null;
  // Only the session service's own 404 (a problem: no team routes there), never a proxy's misroute.
  if (response.status === 404 && response.headers.get('content-type')?.startsWith('application/problem+json')) {
    await response.body?.cancel();
    const session = await fetchSession(cookieHeader, {
      sessionServiceUrl: options.sessionServiceUrl,
      cookieName: options.cookieName,
      requestHeaders: options.requestHeaders,
    });
    return session && { session, capabilities: capabilitiesFor(session.role) };
  }
  if (!response.ok)
    throw new DeskpilotError('upstream_unavailable', { detail: `The session service answered ${response.status}.` });
  const body = (await response.json()) as { session: Session; capabilities: Record<string, boolean> };
  return { session: body.session, capabilities: body.capabilities };
}
