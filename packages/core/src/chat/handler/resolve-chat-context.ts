import { DeskpilotError } from '../../errors/deskpilot-error.js';
import { noSessionError } from '../../session/require-session.js';
import type { CapabilityRegistry } from '../../capabilities/capabilities.js';
import { verifyChatGrant, type ChatGrantPolicy, type ChatGrantUse } from '../context/chat-grant.js';
import type { GrantSessionCheck } from '../context/grant-sessions.js';
import { normalizeEmail } from '../../session/user-directory.js';
import { safeParseChatContext, type ChatContext, type ChatContextLimits } from '../context/parse-chat-context.js';

/**
 * A context's flags held to what its session has now: every flag the session's policy governs (those
 * the grant named, and those it left to their defaults) on only when the session has it too. A flag
 * the session service does not know (a chat's own) keeps the grant's word: no policy decides it.
 */
function heldTo(context: ChatContext, now: Record<string, boolean>): ChatContext {
  const capabilities = Object.fromEntries(
    Object.entries(context.capabilities).map(([flag, value]) => [
      flag,
      Object.hasOwn(now, flag) ? value === true && now[flag] === true : value,
    ]),
  );
  return { ...context, capabilities };
}

/** Options of {@link resolveChatContext}. */
export interface ResolveChatContextOptions {
  /** The request body's `context`. */
  input: unknown;
  capabilities: CapabilityRegistry;
  limits?: ChatContextLimits | undefined;
  /** When set, identity and flags come only from `context.grant`, a JWS signed with this secret. */
  contextSecret?: string | undefined;
  grantPolicy: Required<ChatGrantPolicy>;
  now: () => number;
  /** What the grant must be for (one of them). @default 'chat' */
  grantUse?: ChatGrantUse | readonly ChatGrantUse[] | undefined;
  /** Checks that a verified grant's session is live, when the handler has `grantSessions`. */
  checkGrantSession?: GrantSessionCheck | undefined;
  /** The request answers approval cards (a write may run on it): the grant's session is read now, not from a cache. */
  fresh?: boolean | undefined;
  /** What the host's `resolveContext` answered, when it has one: null is no session. */
  host?: HostChatContext | null;
}

/** The trusted part of a chat context, from the host's own session (`createChatHandler({ resolveContext })`). */
export interface HostChatContext {
  userEmail: string;
  projectKey: string;
  userRole?: string;
  businessType?: string;
  /** The host's sign-in session, recorded with each approval decision (who decided, from which session). */
  sessionId?: string;
  /** Capability flags (`canRefundOrders`…), as in a request body's context. */
  [flag: `can${string}`]: boolean | undefined;
}

/** The context a turn runs in, or why the request is refused. */
export type ResolveChatContextResult =
  | {
      ok: true;
      context: ChatContext;
      /** The sign-in session the request comes from, when known (a grant's `sid`, the host's `sessionId`). */
      signInSessionId?: string | undefined;
      /** The grant's session, when the handler checks grants' sessions: a running answer watches it. */
      grantSessionId?: string | undefined;
    }
  | { ok: false; error: DeskpilotError };

/**
 * Identity and flags: from the host's session when it has a `resolveContext`, else from the signed
 * grant when a secret is configured, from the body otherwise.
 * A missing or invalid grant throws `unauthenticated`, as {@link verifyChatGrant} does.
 */
export async function resolveChatContext(options: ResolveChatContextOptions): Promise<ResolveChatContextResult> {
  const parseOptions = { capabilities: options.capabilities, limits: options.limits };
  const parsed = safeParseChatContext(options.input, parseOptions);
  if (!parsed.success) return { ok: false, error: parsed.error };
  const { pageContext, proactiveHint, workingMemoryBlock } = parsed.data;
  if ('host' in options) {
    if (!options.host) return { ok: false, error: noSessionError() };
    const { sessionId, ...identity } = options.host;
    const hosted = safeParseChatContext({ ...identity, pageContext, proactiveHint, workingMemoryBlock }, parseOptions);
    // The host's own answer is malformed: its mistake, not the client's.
    if (!hosted.success) throw new TypeError(`resolveContext returned an invalid context: ${hosted.error.message}`);
    return { ok: true, context: hosted.data, signInSessionId: sessionId };
  }
  if (!options.contextSecret) return { ok: true, context: parsed.data };
  const grant = await verifyChatGrant(
    (options.input as { grant?: unknown } | undefined)?.grant,
    options.contextSecret,
    { ...options.grantPolicy, now: options.now, use: options.grantUse ?? 'chat' },
  );
  const live = (await options.checkGrantSession?.(grant.sessionId, { fresh: options.fresh === true }))?.session;
  // A usage grant is for a project its holder administers from a session in another: the studio
  // vouched for the role there; the session must still be theirs and live.
  const elsewhere = grant.use === 'usage';
  // A grant for another project or user than the session it names is no grant of that session.
  if (
    live &&
    ((!elsewhere && live.projectKey !== grant.projectKey) ||
      normalizeEmail(live.userEmail) !== normalizeEmail(grant.userEmail))
  )
    return { ok: false, error: new DeskpilotError('unauthenticated', { detail: 'The chat grant is invalid.' }) };
  const { use: _use, ...claims } = grant;
  const granted = safeParseChatContext(
    {
      ...claims,
      ...grant.capabilities,
      ...(live && !elsewhere ? { userRole: live.role } : {}),
      pageContext,
      proactiveHint,
      workingMemoryBlock,
    },
    parseOptions,
  );
  if (!granted.success)
    return { ok: false, error: new DeskpilotError('unauthenticated', { detail: 'The chat grant is invalid.' }) };
  return {
    ok: true,
    context: live && !elsewhere ? heldTo(granted.data, live.capabilities) : granted.data,
    signInSessionId: grant.sessionId,
    ...(options.checkGrantSession ? { grantSessionId: grant.sessionId } : {}),
  };
}
