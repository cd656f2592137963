// The page's calls: the session routes and the chat through @deskpilot/client, the two studio routes
// of its own (the chat context, the data API), and one sentence for every error the page meets.
import {
  createDeskpilotClient,
  DeskpilotClientError,
  type AuditRecord,
  type Session,
  type SessionSummary,
  type Team,
  type TeamMember,
  type TeamPolicy,
} from '@deskpilot/client';
import { magicLinkRoutes } from '@deskpilot/magic-link/routes';
import { passkeyRoutes } from '@deskpilot/passkeys/routes';
import { scimRoutes } from '@deskpilot/scim/routes';
import { ssoConnectionRoutes, ssoRoutes } from '@deskpilot/sso/routes';

export type { AuditRecord, Session, SessionSummary, Team, TeamMember, TeamPolicy };

/** The session routes on the studio's own origin (its proxy; the session cookie rides along). */
export const client = createDeskpilotClient();
/** The modules' routes, derived from their declarations as the kernel's are. */
export const passkeys = client.routes(passkeyRoutes);
export const sso = client.routes(ssoRoutes);
export const magicLink = client.routes(magicLinkRoutes);
/** An organisation's own connections and SCIM directory, for its admins. */
export const ssoConnections = client.routes(ssoConnectionRoutes);
export const scim = client.routes(scimRoutes);
/** A passkey as its owner sees it. */
export type Passkey = Awaited<ReturnType<typeof passkeys.registerPasskey>>;

/** What the studio gives the page to talk to the chat service. */
export interface ChatSetup {
  chatServiceUrl: string;
  context: Record<string, unknown> & { userEmail: string; projectKey: string; userRole: string };
}

/** The studio's own routes, their failures read the way the client reads the services'. */
async function studioGet<T>(path: string, service: string): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path);
  } catch {
    throw new DeskpilotClientError('network_error', 0, `The ${service} is unreachable.`);
  }
  if (!response.ok) {
    const problem = (await response.json().catch(() => null)) as { code?: string; detail?: string } | null;
    throw new DeskpilotClientError(
      problem?.code ?? 'unexpected_response',
      response.status,
      problem?.detail ?? `The ${service} answered ${response.status}.`,
    );
  }
  return (await response.json()) as T;
}

/** Who is signed in (null: no one), asked of the studio, which answers 200 either way. */
export const currentSession = async () =>
  (await studioGet<{ session: Session | null }>('/studio/session', 'studio')).session;

/** Where the chat service is, and the context (with a fresh grant when the chat requires one) for the signed-in user. */
export const chatSetup = () => studioGet<ChatSetup>('/studio/chat-context', 'studio');

/** The Usage page's chat context for a project: the session's own, or one the user administers from here. */
export const usageSetup = (projectKey: string) =>
  studioGet<ChatSetup>(`/studio/usage-context?projectKey=${encodeURIComponent(projectKey)}`, 'studio');

/** The data API through the studio's identity proxy. */
export const dataApi = <T>(path: string) => studioGet<T>(`/api${path}`, 'data API');

/** A client for the chat service the studio names. */
export const chatClient = (chatServiceUrl: string) => createDeskpilotClient({ chatBaseUrl: chatServiceUrl });

/**
 * An `sso_required` answer (the project's organisation signs its members in at its identity provider):
 * the browser goes to sign in there, for `projectKey` when a switch asked for it (authenticating there
 * now). False for any other error.
 */
export function signInWhereRequired(error: unknown, projectKey?: string): boolean {
  if (!DeskpilotClientError.isInstance(error, 'sso_required') || !error.provider) return false;
  const query =
    projectKey === undefined
      ? { provider: error.provider.id }
      : { provider: error.provider.id, projectKey, reauthenticate: 'true' as const };
  window.location.assign(client.url(ssoRoutes.startSingleSignOn, query));
  return true;
}

/** One sentence a representative can act on, for any error the page meets. */
export function explain(error: unknown): string {
  // An `error` part of the chat's stream arrives as a plain Error with the service's own sentence
  // (always one written for people: "Your session has ended: this answer was stopped. Sign in again.").
  if (error instanceof Error && Object.getPrototypeOf(error) === Error.prototype && error.message.length > 0)
    return error.message;
  if (!DeskpilotClientError.isInstance(error)) return 'Something went wrong. Try again.';
  switch (error.code) {
    case 'network_error':
      return `${error.message} Check your connection or that the service is running, then retry.`;
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

export { DeskpilotClientError };
