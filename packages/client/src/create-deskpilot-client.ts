import { DefaultChatTransport, type UIMessage } from 'ai';
import { DeskpilotClientError, errorFromResponse } from './deskpilot-client-error.js';

/** A session as the session routes answer it. */
export interface Session {
  id: string;
  /** `emailVerified`: the user proved the address (absent from a session service of an earlier release). */
  user: { id: string; email: string; name: string; emailVerified?: boolean };
  projectKey: string;
  clientId: string;
  role: string;
  memberships: Array<{ projectKey: string; clientId: string; role: string }>;
  createdAt: string;
  expiresAt: string;
  idleExpiresAt: string;
}

/** A passkey as its owner sees it. */
export interface Passkey {
  id: string;
  name: string;
  deviceType: 'singleDevice' | 'multiDevice';
  backedUp: boolean;
  createdAt: string;
  lastUsedAt: string | null;
}

/** The chat context a request carries (identity and flags, or a signed `grant`, plus the page's fields). */
export type ChatContext = Record<string, unknown>;

/** How a conversation's last turn ended; null before the first. */
export type TurnStatus = 'complete' | 'aborted' | 'awaiting_approval' | 'budget_exhausted' | 'failed' | null;

/** A stored conversation, as `POST /chat/history` answers it. */
export interface ChatHistory<Message extends UIMessage = UIMessage> {
  sessionId: string;
  /** The active branch, first message first (an edit or a regeneration starts a new branch). */
  messages: Message[];
  /**
   * For each message of `messages` that has siblings (other edits of it, other answers to the same
   * message): all their ids, itself included, oldest first. Pass one to `selectBranch` to show it.
   */
  siblings: Record<string, string[]>;
  lastTurnStatus: TurnStatus;
  title: string | null;
  archived: boolean;
}

/** A conversation as `POST /chat/conversations/update` answers it. */
export interface Conversation {
  sessionId: string;
  /** Null until named, or titled from the first exchange. */
  title: string | null;
  status: TurnStatus;
  archived: boolean;
  /** ISO 8601. */
  createdAt: string;
  /** The last activity (ISO 8601): the list's order. */
  updatedAt: string;
}

/** A conversation in a list: with the start of its last message. */
export interface ConversationListItem extends Conversation {
  preview: string | null;
}

/** A page of conversations; `nextCursor` asks for the next one (null on the last page). */
export interface ConversationPage {
  conversations: ConversationListItem[];
  nextCursor: string | null;
}

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

/** How the signed-in user steps up for an approval (`client.stepUpOptions`). */
export type StepUpChallenge =
  | { method: 'passkey'; options: Record<string, unknown> }
  | { method: 'password' }
  | { method: 'recent-sign-in' }
  /**
   * Sign in again first: the user's passkeys were all added since this sign-in, or they authenticate
   * at their identity provider again (`provider`: `ssoStartUrl(provider.id, projectKey, { reauthenticate: true })`).
   */
  | { method: 'sign-in-again'; provider?: { id: string; name: string } };

/** A step-up proof for the chat service (`client.stepUp`). */
export interface StepUpProofResponse {
  token: string;
  method: 'passkey' | 'password' | 'recent-sign-in';
  credentialId: string | null;
  /** For a recent sign-in at an identity provider: which, when the person authenticated there (ISO 8601), its `sid` and `jti`. */
  atProvider?: { provider: string; authTime: string; sid: string | null; jti: string | null };
  expiresAt: string;
}

/** A member of a project, with their memberships there (`client.teamMembers`). */
export interface TeamMember {
  user: { id: string; email: string; name: string; emailVerified?: boolean };
  memberships: Array<{ projectKey: string; clientId: string; role: string }>;
}

/** A session as its owner, or an admin of its project, reviews it (`client.listSessions`). */
export interface SessionSummary {
  id: string;
  /** The session of this client. */
  current: boolean;
  projectKey: string;
  clientId: string;
  createdAt: string;
  /** To the renewal interval (a minute by default). */
  lastSeenAt: string;
  expiresAt: string;
  clientAddress: string | null;
  userAgent: string | null;
}

/** A pending invitation, as its project's admins see it (never its token). */
export interface Invitation {
  id: string;
  projectKey: string;
  clientId: string;
  role: string;
  email: string;
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
}

/** A project's team (`client.teamMembers`). */
export interface Team {
  projectKey: string;
  roles: string[];
  members: TeamMember[];
  invitations: Invitation[];
}

/** One record of a project's audit trail, in its hash chain. */
export interface AuditRecord {
  projectKey: string;
  seq: number;
  /** Epoch milliseconds; `time` is the same instant in ISO 8601. */
  at: number;
  time: string;
  type: string;
  actor: string | null;
  session: string | null;
  subject: string | null;
  data: Record<string, unknown>;
  prevHash: string;
  hash: string;
}

/** What `client.verifyAudit` found: the whole trail sound with its head, or the first record that is not as written. */
export type AuditVerification =
  | {
      ok: true;
      projectKey: string;
      records: number;
      head: { projectKey: string; seq: number; hash: string; prunedThrough: number } | null;
    }
  | {
      ok: false;
      projectKey: string;
      seq: number;
      problem: 'edited' | 'missing' | 'truncated' | 'unchained' | 'rewritten';
    };

/** A project's role policy (`client.teamPolicy`): role → the capability flags it grants or withholds. */
export interface TeamPolicy {
  projectKey: string;
  roles: Record<string, Record<string, boolean>>;
  /** 0 for the built-in policy; pass it back to `setTeamPolicy`. */
  version: number;
  updatedAt: string | null;
  updatedBy: string | null;
  /** The flags a policy may name; a flag a role does not name: read on, write off. */
  capabilities: Array<{ name: string; kind: 'read' | 'write' }>;
}

/** Filters of `client.auditLog`. */
export interface AuditFilter {
  projectKey: string;
  actor?: string;
  type?: string;
  /** ISO 8601, inclusive. */
  from?: string;
  /** ISO 8601, exclusive. */
  to?: string;
  /** The next page: the `next` of the page before. */
  before?: string;
  /** 1 to 1000. @default 50 */
  limit?: number;
}

type SessionCall = (path: string, init?: RequestInit) => Promise<Response>;

/** The team calls of the session routes: a project's admins manage its members and read its audit trail. */
function teamCalls(session: SessionCall, post: (body: unknown) => RequestInit, sessionBaseUrl: string) {
  const query = (values: Record<string, string | number | undefined>) =>
    new URLSearchParams(
      Object.entries(values).flatMap(([name, value]) => (value === undefined ? [] : [[name, String(value)]])),
    ).toString();
  return {
    /** A project's members, roles and pending invitations (its admins only). */
    teamMembers: async (projectKey: string): Promise<Team> =>
      (await session(`/sessions/team/members?${query({ projectKey })}`)).json(),
    /** Sets a member's role (409 `last_admin` when it would leave the project without an admin). */
    changeMemberRole: async (input: { projectKey: string; userId: string; role: string }): Promise<TeamMember> =>
      (await session('/sessions/team/members/role', post(input))).json(),
    /** Removes a member from a project (409 `last_admin` for its last admin). */
    removeMember: async (input: { projectKey: string; userId: string }): Promise<void> =>
      void (await session('/sessions/team/members/remove', post(input))),
    /** Invites an address: `token` (and `link`) only when the service does not email it. */
    invite: async (input: {
      projectKey: string;
      email: string;
      role: string;
      clientId?: string;
    }): Promise<{ invitation: Invitation; token?: string; link?: string }> =>
      (await session('/sessions/team/invitations', post(input))).json(),
    /** Revokes a pending invitation. */
    revokeInvitation: async (input: { projectKey: string; id: string }): Promise<void> =>
      void (await session('/sessions/team/invitations/revoke', post(input))),
    /**
     * Accepts an invitation: signed in as the invited address, the token alone; without an account, with
     * a name and a password (the account is made and signed in, its cookie set by the answer).
     */
    acceptInvitation: async (input: { token: string; name?: string; password?: string }): Promise<Session> => {
      const answer = await (await session('/sessions/invitations/accept', post(input))).json();
      return input.password === undefined ? answer.session : answer;
    },
    /** The organisations the signed-in user administers, each with its projects (whose admin they are too). */
    organizations: async (): Promise<Array<{ organization: string; projects: string[] }>> =>
      (await (await session('/sessions/organizations')).json()).organizations,
    /** An organisation's admins (its admins only; 404 `not_found` for anyone else). */
    organizationAdmins: async (organization: string): Promise<Array<{ id: string; email: string; name: string }>> =>
      (await (await session(`/sessions/organizations/admins?${query({ organization })}`)).json()).admins,
    /** Makes an account (by its address) an admin of the organisation too (its admins only). */
    addOrganizationAdmin: async (input: {
      organization: string;
      email: string;
    }): Promise<{ id: string; email: string; name: string }> =>
      (await (await session('/sessions/organizations/admins', post(input))).json()).admin,
    /** Makes someone an admin of the organisation no longer (409 `last_admin` for its last one). */
    removeOrganizationAdmin: async (input: { organization: string; userId: string }): Promise<void> =>
      void (await session('/sessions/organizations/admins/remove', post(input))),
    /** A project's role policy (its admins only). */
    teamPolicy: async (projectKey: string): Promise<TeamPolicy> =>
      (await session(`/sessions/team/policy?${query({ projectKey })}`)).json(),
    /** Replaces a project's role policy from the `version` read (409 `conflict` when it changed meanwhile). */
    setTeamPolicy: async (input: {
      projectKey: string;
      roles: Record<string, Record<string, boolean>>;
      version: number;
    }): Promise<TeamPolicy> => (await session('/sessions/team/policy', post(input))).json(),
    /** The signed-in user's capability flags in the active project, under its role policy now. */
    capabilities: async (): Promise<{
      projectKey: string;
      role: string;
      capabilities: Record<string, boolean>;
      session: Session;
    }> => (await session('/sessions/current/capabilities')).json(),
    /** A member's live sessions in a project (its admins only). */
    memberSessions: async (input: { projectKey: string; userId: string }): Promise<SessionSummary[]> =>
      (await (await session(`/sessions/team/sessions?${query(input)}`)).json()).sessions,
    /** Ends one of a member's sessions in a project (`id`), or all of them; resolves to how many ended. */
    revokeMemberSessions: async (input: { projectKey: string; userId: string; id?: string }): Promise<number> =>
      (await (await session('/sessions/team/sessions/revoke', post(input))).json()).revoked,
    /** A page of a project's audit trail, newest first (its admins only); `next` asks for the following page. */
    auditLog: async (filter: AuditFilter): Promise<{ records: AuditRecord[]; next: string | null }> =>
      (await session(`/sessions/team/audit?${query({ ...filter })}`)).json(),
    /**
     * Walks a project's whole audit trail (its admins only): sound, or the first record edited, missing
     * or rewritten; `expectHead`, a head kept elsewhere, catches history rewritten with its head.
     */
    verifyAudit: async (projectKey: string, expectHead?: { seq: number; hash: string }): Promise<AuditVerification> =>
      (
        await session(
          `/sessions/team/audit/verify?${query({
            projectKey,
            ...(expectHead ? { expectSeq: String(expectHead.seq), expectHash: expectHead.hash } : {}),
          })}`,
        )
      ).json(),
    /** Where a project's whole audit trail downloads as JSON lines (a link for the browser to follow). */
    auditExportUrl: (projectKey: string): string =>
      `${sessionBaseUrl}/sessions/team/audit/export?${query({ projectKey })}`,
  };
}

/** The account calls of the session routes: recovery by email, sign-in links, and passkeys. */
function accountCalls(session: SessionCall, post: (body: unknown) => RequestInit, sessionBaseUrl: string) {
  return {
    /** Asks for a password reset link; resolves the same whether or not the address has an account. */
    requestPasswordReset: async (email: string): Promise<void> =>
      void (await session('/sessions/password-reset', post({ email }))),
    /** Sets a new password with a reset link's token; every session of the user ends (sign in again). */
    resetPassword: async (input: { token: string; password: string }): Promise<void> =>
      void (await session('/sessions/password-reset/confirm', post(input))),
    /** Sends a verification link to the signed-in user's address. */
    requestEmailVerification: async (): Promise<void> =>
      void (await session('/sessions/current/email-verification', post({}))),
    /** Asks for a sign-in link by email (`@deskpilot/magic-link`); resolves the same whether or not the address has an account. */
    requestMagicLink: async (email: string): Promise<void> =>
      void (await session('/sessions/magic-link', post({ email }))),
    /** Signs in with a sign-in link's token (used up); the session cookie is set by the answer. */
    signInWithMagicLink: async (input: { token: string; projectKey?: string }): Promise<Session> =>
      (await session('/sessions/magic-link/confirm', post(input))).json(),
    /** Options to register a passkey (pass them to `startRegistration` of `@simplewebauthn/browser`). */
    passkeyRegistrationOptions: async (): Promise<Record<string, unknown>> =>
      (await session('/sessions/current/passkeys/options', post({}))).json(),
    /** Stores a passkey: the browser's answer to {@link passkeyRegistrationOptions}. */
    registerPasskey: async (response: object, name?: string): Promise<Passkey> =>
      (
        await session('/sessions/current/passkeys', post(name === undefined ? { response } : { response, name }))
      ).json(),
    /** The signed-in user's passkeys, oldest first. */
    listPasskeys: async (): Promise<Passkey[]> =>
      ((await (await session('/sessions/current/passkeys')).json()) as { passkeys: Passkey[] }).passkeys,
    /** Options for the assertion a removal needs (pass them to `startAuthentication`): one of the user's passkeys confirms. */
    passkeyRemovalOptions: async (): Promise<Record<string, unknown>> =>
      (await session('/sessions/current/passkeys/remove/options', post({}))).json(),
    /** Removes one of the signed-in user's passkeys, with the browser's answer to {@link passkeyRemovalOptions}. */
    removePasskey: async (id: string, response: object): Promise<void> =>
      void (await session('/sessions/current/passkeys/remove', post({ id, response }))),
    /** Options to sign in with a passkey (pass them to `startAuthentication`). */
    passkeySignInOptions: async (): Promise<Record<string, unknown>> =>
      (await session('/sessions/passkey/options', post({}))).json(),
    /** Signs in with the browser's answer to {@link passkeySignInOptions}; the session cookie is set by the answer. */
    signInWithPasskey: async (response: object, projectKey?: string): Promise<Session> =>
      (
        await session('/sessions/passkey', post(projectKey === undefined ? { response } : { response, projectKey }))
      ).json(),
    /**
     * Where a browser goes to sign in through an identity provider (a navigation, not a fetch: it leaves
     * the page). `reauthenticate`: the person authenticates there now, as a step-up asks.
     */
    ssoStartUrl: (providerId: string, projectKey?: string, settings: { reauthenticate?: boolean } = {}): string =>
      `${sessionBaseUrl}/sessions/sso/start?${new URLSearchParams({
        provider: providerId,
        ...(projectKey === undefined ? {} : { projectKey }),
        ...(settings.reauthenticate ? { reauthenticate: 'true' } : {}),
      })}`,
    /** The identity provider of an email's domain (home-realm discovery), or null: then sign in with a password. */
    discoverSso: async (email: string): Promise<{ id: string; name: string } | null> => {
      try {
        return (
          (await (await session('/sessions/sso/discover', post({ email }))).json()) as {
            provider: { id: string; name: string };
          }
        ).provider;
      } catch (error) {
        if (DeskpilotClientError.isInstance(error, 'not_found')) return null;
        throw error;
      }
    },
    /**
     * How the signed-in user steps up for an approval card's `approval.descriptor.stepUp.binding`: their
     * passkey (pass `options` to `startAuthentication`), their password, or nothing more (a recent sign-in).
     */
    stepUpOptions: async (binding: string): Promise<StepUpChallenge> =>
      (await session('/sessions/current/step-up/options', post({ binding }))).json(),
    /** Verifies the user afresh (a passkey answer, or the password, or neither) and returns the proof to send with the approval. */
    stepUp: async (input: { binding: string; response?: object; password?: string }): Promise<StepUpProofResponse> =>
      (await session('/sessions/current/step-up', post(input))).json(),
    /**
     * Logs out here and answers where to sign out at the identity provider too (RP-initiated logout):
     * send the browser there when it is not null (a session that came from single sign-on).
     */
    ssoLogout: async (): Promise<string | null> =>
      ((await (await session('/sessions/sso/logout', post({}))).json()) as { endSessionUrl: string | null })
        .endSessionUrl,
    /** Marks the address verified with a verification link's token. */
    verifyEmail: async (token: string): Promise<void> =>
      void (await session('/sessions/email-verification/confirm', post({ token }))),
  };
}

/**
 * A typed client for a Deskpilot deployment, in the browser or on Node: the session routes, the chat
 * history, and the `useChat` transport. Every failure is a {@link DeskpilotClientError} with the
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
  const post = (body: unknown): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const session = (path: string, init?: RequestInit) =>
    call('session service', `${options.sessionBaseUrl ?? ''}${path}`, init);
  const chat = (path: string, init?: RequestInit) => call('chat service', `${options.chatBaseUrl ?? ''}${path}`, init);

  return {
    /** Signs in; the session cookie is set by the answer. */
    login: async (input: { email: string; password: string; projectKey?: string }): Promise<Session> =>
      (await session('/sessions', post(input))).json(),
    /** The current session, or null when signed out. */
    currentSession: async (): Promise<Session | null> => {
      try {
        return await (await session('/sessions/current')).json();
      } catch (error) {
        if (DeskpilotClientError.isInstance(error, 'unauthenticated')) return null;
        throw error;
      }
    },
    /** Switches the active project (a new cookie; the role comes from the membership). */
    switchProject: async (target: { projectKey: string; clientId?: string }): Promise<Session> =>
      (await session('/sessions/current/project', post(target))).json(),
    /** Signs out of this session. */
    logout: async (): Promise<void> => void (await session('/sessions/current', { method: 'DELETE' })),
    /** This user's live sessions (where and when each was signed in, last seen), this one `current`. */
    listSessions: async (): Promise<SessionSummary[]> =>
      (await (await session('/sessions/current/sessions')).json()).sessions,
    /** Ends one of this user's sessions by id (this one too: signed out). */
    revokeSession: async (id: string): Promise<void> =>
      void (await session('/sessions/current/sessions/revoke', post({ id }))),
    /** Signs out of every session of this user. */
    logoutEverywhere: async (): Promise<void> => void (await session('/sessions', { method: 'DELETE' })),
    ...accountCalls(session, post, options.sessionBaseUrl ?? ''),
    ...teamCalls(session, post, options.sessionBaseUrl ?? ''),
    /** A stored conversation, or null when it does not exist (yet) for this user, or was deleted. */
    chatHistory: async <Message extends UIMessage = UIMessage>(input: {
      sessionId: string;
      context?: ChatContext;
    }): Promise<ChatHistory<Message> | null> => {
      try {
        return await (await chat('/chat/history', post(input))).json();
      } catch (error) {
        if (DeskpilotClientError.isInstance(error, 'not_found')) return null;
        if (DeskpilotClientError.isInstance(error, 'conversation_deleted')) return null;
        throw error;
      }
    },
    /** A page of the user's conversations in the project (or the archive), newest activity first. */
    listConversations: async (
      input: { context?: ChatContext; archived?: boolean; cursor?: string; limit?: number } = {},
    ): Promise<ConversationPage> => (await chat('/chat/conversations', post(input))).json(),
    /** Renames, archives or brings back a conversation. */
    updateConversation: async (input: {
      sessionId: string;
      context?: ChatContext;
      title?: string;
      archived?: boolean;
    }): Promise<Conversation> => (await chat('/chat/conversations/update', post(input))).json(),
    /**
     * Shows another branch of a conversation: the one through `messageId` (a sibling its history
     * listed), down its newest messages. Later messages go on from there. Answers the history.
     */
    selectBranch: async <Message extends UIMessage = UIMessage>(input: {
      sessionId: string;
      messageId: string;
      context?: ChatContext;
    }): Promise<ChatHistory<Message>> => (await chat('/chat/conversations/branch', post(input))).json(),
    /** Deletes a conversation (its messages go; asking for it later is `conversation_deleted`). */
    deleteConversation: async (input: { sessionId: string; context?: ChatContext }): Promise<void> =>
      void (await chat('/chat/conversations/delete', post(input))),
    /**
     * The `useChat` transport for the chat service: each request carries only the newest message (the
     * server keeps the history), the conversation id as `sessionId`, and a context asked for anew.
     */
    chatTransport: <Message extends UIMessage = UIMessage>(transport: ChatTransportOptions) =>
      new DefaultChatTransport<Message>({
        api: `${options.chatBaseUrl ?? ''}/chat`,
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
