import { DefaultChatTransport, type UIMessage } from 'ai';
import { chatRoutes } from '@deskpilot/core/chat-routes';
import {
  organizationRoutes,
  recoveryRoutes,
  sessionRoutes,
  stepUpRoutes,
  teamRoutes,
  type RouteDeclaration,
  type RouteInput,
  type RouteOutput,
} from '@deskpilot/core/routes';
import { DeskpilotClientError, errorFromResponse } from './deskpilot-client-error.js';
import { routeCalls, routeUrl, type RouteCalls, type SendRequest } from './route-calls.js';

// Every type below is the answer or the input of a route as declared (`@deskpilot/core/routes`):
// the client writes no type of its own that the server defines.

/** A session as the session routes answer it. */
export type Session = RouteOutput<typeof sessionRoutes.currentSession>;
/** A session as its owner, or an admin of its project, reviews it (`client.listSessions`). */
export type SessionSummary = RouteOutput<typeof sessionRoutes.listSessions>['sessions'][number];
/** A project's team (`client.teamMembers`). */
export type Team = RouteOutput<typeof teamRoutes.teamMembers>;
/** A member of a project, with their memberships there. */
export type TeamMember = RouteOutput<typeof teamRoutes.changeMemberRole>;
/** A pending invitation, as its project's admins see it (never its token). */
export type Invitation = Team['invitations'][number];
/** One record of a project's audit trail, in its hash chain. */
export type AuditRecord = RouteOutput<typeof teamRoutes.teamAudit>['records'][number];
/** What `client.verifyAudit` found: the whole trail sound with its head, or the first record that is not as written. */
export type AuditVerification = RouteOutput<typeof teamRoutes.verifyTeamAudit>;
/** A project's role policy (`client.teamPolicy`): role → the capability flags it grants or withholds. */
export type TeamPolicy = RouteOutput<typeof teamRoutes.teamPolicy>;
/** Filters of `client.auditLog`: the route's query, its page size a number. */
export type AuditFilter = Omit<RouteInput<typeof teamRoutes.teamAudit>, 'limit'> & { limit?: number };
/** How the signed-in user steps up for an approval (`client.stepUpOptions`). */
export type StepUpChallenge = RouteOutput<typeof stepUpRoutes.stepUpOptions>;
/** A step-up proof for the chat service (`client.stepUp`). */
export type StepUpProofResponse = RouteOutput<typeof stepUpRoutes.stepUp>;
/** The chat context a request carries (identity and flags, or a signed `grant`, plus the page's fields). */
export type ChatContext = Record<string, unknown>;
/** A conversation as `POST /chat/conversations/update` answers it. */
export type Conversation = RouteOutput<typeof chatRoutes.updateConversation>;
/** How a conversation's last turn ended; null before the first. */
export type TurnStatus = Conversation['status'];
/** A page of conversations; `nextCursor` asks for the next one (null on the last page). */
export type ConversationPage = RouteOutput<typeof chatRoutes.listConversations>;
/** A conversation in a list: with the start of its last message. */
export type ConversationListItem = ConversationPage['conversations'][number];
/** A stored conversation, as `POST /chat/history` answers it, its messages typed as the app's. */
export type ChatHistory<Message extends UIMessage = UIMessage> = Omit<
  RouteOutput<typeof chatRoutes.chatHistory>,
  'messages'
> & { messages: Message[] };

/** Options of {@link createDeskpilotClient}. */
export interface DeskpilotClientOptions {
  /** Where the session routes are: the studio's origin (its proxy) or the session service. @default "" (this origin) */
  sessionBaseUrl?: string;
  /** Where the chat service is. @default "" (this origin) */
  chatBaseUrl?: string;
  /** @default globalThis.fetch */
  fetch?: typeof globalThis.fetch;
  /** Cookies on cross-origin calls (`'include'` for a session service on another origin of the site). @default "same-origin" */
  credentials?: RequestCredentials;
}

/** Options of `client.chatTransport`. */
export interface ChatTransportOptions {
  /** The context of each request, asked for every time (so a short-lived grant is always fresh). */
  context: ChatContext | (() => ChatContext | Promise<ChatContext>);
  /** `openai` or `anthropic`, when the chat service has both. */
  provider?: 'openai' | 'anthropic';
  /**
   * The step-up proofs to send with the next request, by approval id (from `client.stepUp`), asked for
   * every time: a card whose approval needs a step-up puts its proof here before it answers.
   */
  stepUp?: () => Record<string, string> | undefined;
}

/**
 * A typed client for a Deskpilot deployment, in the browser or on Node, derived from the routes as
 * declared: the session routes, the team's, the chat's, and the `useChat` transport; a module's routes
 * through `client.routes(magicLinkRoutes)`. Every failure is a {@link DeskpilotClientError} with the
 * problem's stable `code`.
 *
 * @example
 * const client = createDeskpilotClient({ chatBaseUrl: 'https://chat.example.com' });
 * const session = await client.login({ email, password });
 * const { messages } = useChat({ id, transport: client.chatTransport({ context: () => fetchContext() }) });
 */
export function createDeskpilotClient(options: DeskpilotClientOptions = {}) {
  const fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const credentials = options.credentials ?? 'same-origin';
  const sessionBaseUrl = options.sessionBaseUrl ?? '';
  const chatBaseUrl = options.chatBaseUrl ?? '';
  /** `fetch` that makes a network failure and a non-2xx answer a {@link DeskpilotClientError}. */
  const call = async (service: string, url: string, init: RequestInit = {}): Promise<Response> => {
    let response: Response;
    try {
      response = await fetchImpl(url, { credentials, ...init });
    } catch (cause) {
      if (init.signal?.aborted) throw cause;
      throw new DeskpilotClientError('network_error', 0, `The ${service} is unreachable.`);
    }
    if (!response.ok) throw await errorFromResponse(response, service);
    return response;
  };
  const toSessions: SendRequest = (url, init) => call('session service', url, init);
  const toChat: SendRequest = (url, init) => call('chat service', url, init);
  /** A route's service: the chat's routes are under `/chat`, every other under the session service. */
  const serviceOf = (route: RouteDeclaration) =>
    route.path.startsWith('/chat')
      ? { send: toChat, baseUrl: chatBaseUrl }
      : { send: toSessions, baseUrl: sessionBaseUrl };
  /** The calls of a group of routes, by operation id: the kernel's, a module's (`passkeyRoutes`, `magicLinkRoutes`…). */
  const routes = <Routes extends Record<string, RouteDeclaration>>(group: Routes): RouteCalls<Routes> =>
    routeCalls(serviceOf, group);
  /** Where a browser goes for a `GET` route (a navigation or a download, not a fetch). */
  const url = <Route extends RouteDeclaration>(route: Route, input?: RouteInput<Route>): string =>
    `${serviceOf(route).baseUrl}${routeUrl(route, input as object | undefined).url}`;
  const sessions = routes(sessionRoutes);
  const recovery = routes(recoveryRoutes);
  const stepUp = routes(stepUpRoutes);
  const team = routes(teamRoutes);
  const organizations = routes(organizationRoutes);
  const chat = routes(chatRoutes);

  return {
    routes,
    url,
    /** Signs in; the session cookie is set by the answer. */
    login: sessions.login,
    /** The current session, or null when signed out. */
    currentSession: async (): Promise<Session | null> => {
      try {
        return await sessions.currentSession();
      } catch (error) {
        if (DeskpilotClientError.isInstance(error, 'unauthenticated')) return null;
        throw error;
      }
    },
    /** Switches the active project (a new cookie; the role comes from the membership). */
    switchProject: sessions.switchProject,
    /** Signs out of this session. */
    logout: async (): Promise<void> => sessions.logout(),
    /** This user's live sessions (where and when each was signed in, last seen), this one `current`. */
    listSessions: async (): Promise<SessionSummary[]> => (await sessions.listSessions()).sessions,
    /** Ends one of this user's sessions by id (this one too: signed out). */
    revokeSession: async (id: string): Promise<void> => sessions.revokeSession({ id }),
    /** Signs out of every session of this user. */
    logoutEverywhere: async (): Promise<void> => sessions.logoutEverywhere(),
    /** Asks for a password reset link; resolves the same whether or not the address has an account. */
    requestPasswordReset: async (email: string): Promise<void> => recovery.requestPasswordReset({ email }),
    /** Sets a new password with a reset link's token; every session of the user ends (sign in again). */
    resetPassword: recovery.resetPassword,
    /** Sends a verification link to the signed-in user's address. */
    requestEmailVerification: async (): Promise<void> => recovery.requestEmailVerification({}),
    /** Marks the address verified with a verification link's token. */
    verifyEmail: async (token: string): Promise<void> => recovery.verifyEmail({ token }),
    /**
     * How the signed-in user steps up for an approval card's `approval.descriptor.stepUp.binding`: their
     * passkey (pass `options` to `startAuthentication`), their password, or nothing more (a recent sign-in).
     */
    stepUpOptions: async (binding: string): Promise<StepUpChallenge> => stepUp.stepUpOptions({ binding }),
    /** Verifies the user afresh (a passkey answer, or the password, or neither) and returns the proof to send with the approval. */
    stepUp: stepUp.stepUp,
    ...teamCalls(team, organizations, url),
    ...chatCalls(chat),
    /**
     * The `useChat` transport for the chat service: each request carries only the newest message (the
     * server keeps the history), the conversation id as `sessionId`, and a context asked for anew.
     */
    chatTransport: <Message extends UIMessage = UIMessage>(transport: ChatTransportOptions) =>
      new DefaultChatTransport<Message>({
        api: `${chatBaseUrl}${chatRoutes.chat.path}`,
        credentials,
        // Problems (429, 401…) and network failures reach `useChat`'s `error` as DeskpilotClientErrors.
        fetch: (input, init) => call('chat service', input instanceof Request ? input.url : String(input), init),
        // `useChat({ resume: true })` re-attaches to a running answer with a GET, which has no body:
        // the identity part of the context rides in a header.
        prepareReconnectToStreamRequest: async ({ headers }) => ({
          headers: {
            ...(headers as Record<string, string> | undefined),
            'x-deskpilot-context': encodeContext(
              identityOf(typeof transport.context === 'function' ? await transport.context() : transport.context),
            ),
          },
        }),
        prepareSendMessagesRequest: async ({ id, messages, trigger, messageId }) => ({
          body: {
            sessionId: id,
            messages: messages.slice(-1),
            trigger,
            messageId,
            context: typeof transport.context === 'function' ? await transport.context() : transport.context,
            ...(transport.provider ? { provider: transport.provider } : {}),
            ...stepUpOf(transport),
          },
        }),
      }),
  };
}

/** The chat's calls beside the transport: a conversation's history, the list, and their changes. */
function chatCalls(chat: RouteCalls<typeof chatRoutes>) {
  return {
    /** A stored conversation, or null when it does not exist (yet) for this user, or was deleted. */
    chatHistory: async <Message extends UIMessage = UIMessage>(input: {
      sessionId: string;
      context?: ChatContext;
    }): Promise<ChatHistory<Message> | null> => {
      try {
        return (await chat.chatHistory(input as RouteInput<typeof chatRoutes.chatHistory>)) as ChatHistory<Message>;
      } catch (error) {
        if (DeskpilotClientError.isInstance(error, 'not_found')) return null;
        if (DeskpilotClientError.isInstance(error, 'conversation_deleted')) return null;
        throw error;
      }
    },
    /** A page of the user's conversations in the project (or the archive), newest activity first. */
    listConversations: chat.listConversations,
    /** Renames, archives or brings back a conversation. */
    updateConversation: chat.updateConversation,
    /**
     * Shows another branch of a conversation: the one through `messageId` (a sibling its history
     * listed), down its newest messages. Later messages go on from there. Answers the history.
     */
    selectBranch: async <Message extends UIMessage = UIMessage>(
      input: RouteInput<typeof chatRoutes.selectBranch>,
    ): Promise<ChatHistory<Message>> => (await chat.selectBranch(input)) as ChatHistory<Message>,
    /** Deletes a conversation (its messages go; asking for it later is `conversation_deleted`). */
    deleteConversation: chat.deleteConversation,
  };
}

/** The team calls: a project's admins manage its members and read its audit trail; an organisation's, its admins. */
function teamCalls(
  team: RouteCalls<typeof teamRoutes>,
  organizations: RouteCalls<typeof organizationRoutes>,
  url: <Route extends RouteDeclaration>(route: Route, input?: RouteInput<Route>) => string,
) {
  return {
    /** A project's members, roles and pending invitations (its admins only). */
    teamMembers: async (projectKey: string): Promise<Team> => team.teamMembers({ projectKey }),
    /** Sets a member's role (409 `last_admin` when it would leave the project without an admin). */
    changeMemberRole: team.changeMemberRole,
    /** Removes a member from a project (409 `last_admin` for its last admin). */
    removeMember: team.removeMember,
    /** Invites an address: `token` (and `link`) only when the service does not email it. */
    invite: team.invite,
    /** Revokes a pending invitation. */
    revokeInvitation: team.revokeInvitation,
    /**
     * Accepts an invitation: signed in as the invited address, the token alone; without an account, with
     * a name and a password (the account is made and signed in, its cookie set by the answer).
     */
    acceptInvitation: async (input: RouteInput<typeof teamRoutes.acceptInvitation>): Promise<Session> => {
      const answer = await team.acceptInvitation(input);
      return 'session' in answer ? answer.session : answer;
    },
    /** The organisations the signed-in user administers, each with its projects (whose admin they are too). */
    organizations: async () => (await team.organizations()).organizations,
    /** An organisation's admins (its admins only; 404 `not_found` for anyone else). */
    organizationAdmins: async (organization: string) =>
      (await organizations.organizationAdmins({ organization })).admins,
    /** Makes an account (by its address) an admin of the organisation too (its admins only). */
    addOrganizationAdmin: async (input: RouteInput<typeof organizationRoutes.addOrganizationAdmin>) =>
      (await organizations.addOrganizationAdmin(input)).admin,
    /** Makes someone an admin of the organisation no longer (409 `last_admin` for its last one). */
    removeOrganizationAdmin: organizations.removeOrganizationAdmin,
    /** A project's role policy (its admins only). */
    teamPolicy: async (projectKey: string): Promise<TeamPolicy> => team.teamPolicy({ projectKey }),
    /** Replaces a project's role policy from the `version` read (409 `conflict` when it changed meanwhile). */
    setTeamPolicy: team.setTeamPolicy,
    /** The signed-in user's capability flags in the active project, under its role policy now. */
    capabilities: async () => team.currentCapabilities(),
    /** A member's live sessions in a project (its admins only). */
    memberSessions: async (input: RouteInput<typeof teamRoutes.memberSessions>) =>
      (await team.memberSessions(input)).sessions,
    /** Ends one of a member's sessions in a project (`id`), or all of them; resolves to how many ended. */
    revokeMemberSessions: async (input: RouteInput<typeof teamRoutes.revokeMemberSessions>): Promise<number> =>
      (await team.revokeMemberSessions(input)).revoked,
    /** A page of a project's audit trail, newest first (its admins only); `next` asks for the following page. */
    auditLog: async ({ limit, ...filter }: AuditFilter) =>
      team.teamAudit({ ...filter, ...(limit === undefined ? {} : { limit: String(limit) }) }),
    /**
     * Walks a project's whole audit trail (its admins only): sound, or the first record edited, missing
     * or rewritten; `expectHead`, a head kept elsewhere, catches history rewritten with its head.
     */
    verifyAudit: async (projectKey: string, expectHead?: { seq: number; hash: string }): Promise<AuditVerification> =>
      team.verifyTeamAudit({
        projectKey,
        ...(expectHead ? { expectSeq: String(expectHead.seq), expectHash: expectHead.hash } : {}),
      }),
    /** Where a project's whole audit trail downloads as JSON lines (a link for the browser to follow). */
    auditExportUrl: (projectKey: string): string => url(teamRoutes.exportTeamAudit, { projectKey }),
  };
}

/** The `stepUp` field of a request, when there are proofs to send. */
function stepUpOf(transport: ChatTransportOptions): { stepUp?: Record<string, string> } {
  const proofs = transport.stepUp?.();
  return proofs && Object.keys(proofs).length > 0 ? { stepUp: proofs } : {};
}

/** The part of a context a reconnect needs: who asks (a grant, or the identity fields). */
function identityOf(context: ChatContext): ChatContext {
  const { grant, userEmail, projectKey } = context;
  return Object.fromEntries(
    Object.entries({ grant, userEmail, projectKey }).filter(([, value]) => value !== undefined),
  );
}

/** JSON as base64url (UTF-8), as the chat service reads its context header. */
function encodeContext(context: ChatContext): string {
  const bytes = new TextEncoder().encode(JSON.stringify(context));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** What {@link createDeskpilotClient} returns. */
export type DeskpilotClient = ReturnType<typeof createDeskpilotClient>;
