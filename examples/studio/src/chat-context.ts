import { DeskpilotError, type Session } from '@deskpilot/core';
import { signChatGrant } from '@deskpilot/core/chat';
import { fetchCapabilities, fetchSession, type FetchSessionOptions } from '@deskpilot/core/proxy';
import { capabilitiesOf, defaultRolePolicy } from '@deskpilot/core/team';

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
 * A grant for the `tools` use (ten minutes, the longest the chat service takes): what an MCP client
 * sends as its bearer token. Bound to the session like the page's grants.
 */
export async function toolsGrantFor(
  session: Session,
  secret: string,
  capabilities: Record<string, boolean>,
): Promise<{ grant: string; expiresAt: string }> {
  const expiresInSeconds = 600;
  const grant = await signChatGrant(
    {
      userEmail: session.user.email,
      userRole: session.role,
      projectKey: session.projectKey,
      businessType: businessTypeOf(session.projectKey),
      capabilities,
      sessionId: session.id,
    },
    secret,
    { expiresInSeconds, use: 'tools' },
  );
  return { grant, expiresAt: new Date(Date.now() + expiresInSeconds * 1000).toISOString() };
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
 * one call to the session service (`fetchCapabilities`); null when signed out. A session service without
 * team administration answers the session alone, and the built-in policy applies.
 */
export async function fetchChatIdentity(
  cookieHeader: string | undefined,
  options: FetchSessionOptions,
): Promise<{ session: Session; capabilities: Record<string, boolean> } | null> {
  try {
    return await fetchCapabilities(cookieHeader, options);
  } catch (error) {
    if (!DeskpilotError.isInstance(error) || error.code !== 'not_found') throw error;
    const session = await fetchSession(cookieHeader, options);
    return session && { session, capabilities: capabilitiesFor(session.role) };
  }
}

/**
 * The context of the Usage page for `projectKey`: the page's own chat context for the session's
 * project; for another project the session service says the user administers from this session
 * (`administers`: its own check — an admin membership, or an admin of the project's organisation, and
 * whatever sign-in that organisation requires), a one-minute grant for the `usage` use as its admin
 * (the Usage API's routes take it; no chat route does). Throws `forbidden` for any other project, and
 * `not_found` without a secret (only a grant can name another project).
 */
export async function usageContextFor(
  identity: { session: Session; capabilities: Record<string, boolean> },
  projectKey: string,
  secret: string | undefined,
  administers: (projectKey: string) => Promise<boolean>,
): Promise<PageChatContext> {
  const { session } = identity;
  if (projectKey === session.projectKey) return chatContextFor(session, secret, identity.capabilities);
  if (!secret)
    throw new DeskpilotError('not_found', { detail: 'The chat service signs no grants (CHAT_CONTEXT_SECRET).' });
  if (!(await administers(projectKey)))
    throw new DeskpilotError('forbidden', { detail: 'You do not administer this project.' });
  const identityThere = {
    userEmail: session.user.email,
    userRole: 'admin',
    projectKey,
    businessType: businessTypeOf(projectKey),
  };
  // Short: the chat service cannot see whether its holder still administers the project, so a grant
  // outlives a lost right by this long at most (the page asks for a fresh one for every call).
  const grant = await signChatGrant({ ...identityThere, capabilities: {}, sessionId: session.id }, secret, {
    expiresInSeconds: 60,
    use: 'usage',
  });
  return { ...identityThere, grant };
}
