import { DeskpilotError } from '../../errors/deskpilot-error.js';
import { findMembership } from '../../session/session.js';
import type { SessionStore } from '../../session/session-store.js';
import { isLive } from '../../session/session-summary.js';
import type { UserDirectory } from '../../session/user-directory.js';
import { capabilitiesOf, defaultRolePolicy, type RolePolicyStore } from '../../team/role-policy.js';
import { builtinCapabilities, type CapabilityRegistry } from '../../capabilities/capabilities.js';

/**
 * Options of `createChatHandler({ grantSessions })`: how a grant's session is checked — `isActive`, or
 * `capabilities` (which also holds the grant to the flags its session has now), one of the two.
 */
export interface GrantSessionsOptions {
  /**
   * Whether the session-service session a grant names (its `sid`) is still live — not revoked, not
   * expired: a read of the session store the chat service shares with the session service
   * ({@link isSessionActive}). A rejection refuses the request with 503 `store_unavailable` (fail closed).
   */
  isActive?(sessionId: string): Promise<boolean>;
  /**
   * What the grant's session is now — its project, its user's email and role there, the capability
   * flags that role has — or null when it ended (revoked, expired, its user no longer a member of its
   * project): {@link sessionCapabilities}. A grant for another project or user than its session's is
   * refused; a flag is on only when the grant and this answer both say so, so a role change, a policy
   * change or a removal holds for grants already signed, within `cacheMs`. A rejection refuses the
   * request with 503 `store_unavailable`.
   */
  capabilities?(sessionId: string): Promise<LiveSession | null>;
  /**
   * How long an answer is reused by requests that only read (a turn, the history, the list): a revoked
   * session's grants are refused at most this long after. A request that answers approval cards — the
   * one a write may run on — always reads the session now. @default 5000
   */
  cacheMs?: number;
  /** Most sessions whose answer is kept (the least recently checked go first). @default 10000 */
  maxEntries?: number;
  /**
   * How often a running answer reads its grant's session again: one that ended meanwhile (signed out,
   * revoked, its user deprovisioned or removed from the project) stops the answer — an `error` part,
   * then `finish`, the turn saved `aborted`. A read that fails keeps the answer going (an approval
   * still reads the session when it is answered). @default cacheMs, at least 1000
   */
  watchMs?: number;
}

/** Why a running answer was stopped: its grant's session ended (the `cut` signal's reason). */
export const grantSessionEnded = 'grant-session-ended';

/** Watches a running answer's grant session: aborts `cut` when it ended; the returned function stops watching. */
export type GrantSessionWatch = (sessionId: string, cut: AbortController) => () => void;

/** The watch of running answers, every `watchMs`, over `check` (each read fresh). */
export function createGrantSessionWatch(options: GrantSessionsOptions, check: GrantSessionCheck): GrantSessionWatch {
  const everyMs = options.watchMs ?? Math.max(options.cacheMs ?? 5_000, 1_000);
  // setInterval takes at most 2^31 - 1 ms (about 24.8 days); past it, Node fires every millisecond.
  if (!Number.isFinite(everyMs) || everyMs <= 0 || everyMs > 2 ** 31 - 1)
    throw new TypeError('grantSessions.watchMs must be a positive number of milliseconds, at most 2^31 - 1');
  return (sessionId, cut) => {
    // One read at a time: a store that hangs is not asked again and again.
    let reading = false;
    const timer = setInterval(() => {
      if (reading) return;
      reading = true;
      check(sessionId, { fresh: true })
        .catch((error: unknown) => {
          if (DeskpilotError.isInstance(error) && error.code === 'unauthenticated' && !cut.signal.aborted)
            cut.abort(grantSessionEnded);
        })
        .finally(() => (reading = false));
    }, everyMs);
    // A watch never keeps a process alive on its own.
    (timer as { unref?: () => void }).unref?.();
    return () => clearInterval(timer);
  };
}

/** How a grant's session is checked: `fresh` reads it now, past any answer kept or under way. */
export type GrantSessionCheck = (
  sessionId: string | undefined,
  options?: { fresh?: boolean },
) => Promise<LiveGrantSession>;

/**
 * The check a verified grant passes: the session it names is live. Answers are kept `cacheMs` and
 * concurrent checks of one session share one read, so a page's requests cost one store read per
 * session per `cacheMs`; a `fresh` check (a request a write may run on) reads the session again, and
 * its answer is the one kept from then on. A grant that names no session is refused: with the check
 * configured, an unbound grant would outlive log-out-everywhere.
 */
export function createGrantSessionCheck(options: GrantSessionsOptions, now: () => number): GrantSessionCheck {
  const read = liveSessionRead(options);
  const cacheMs = options.cacheMs ?? 5_000;
  const maxEntries = options.maxEntries ?? 10_000;
  if (!Number.isFinite(cacheMs) || cacheMs < 0)
    throw new TypeError('grantSessions.cacheMs must be zero or a positive number');
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1)
    throw new TypeError('grantSessions.maxEntries must be a positive integer');
  const answers = new Map<string, { until: number; active: Promise<LiveGrantSession | null> }>();
  const refused = (detail: string) => new DeskpilotError('unauthenticated', { detail });
  return async (sessionId, check) => {
    if (sessionId === undefined) throw refused('The chat grant names no session.');
    const time = now();
    let entry = answers.get(sessionId);
    // A kept answer, or one read before this request began, may predate a demotion: not for a write.
    if (!entry || entry.until <= time || check?.fresh) {
      const active = read(sessionId);
      entry = { until: time + cacheMs, active };
      answers.delete(sessionId);
      answers.set(sessionId, entry);
      if (answers.size > maxEntries) answers.delete(answers.keys().next().value!);
      // A failed read is not kept: the next request reads again.
      active.catch(() => answers.get(sessionId) === entry && answers.delete(sessionId));
    }
    let active: LiveGrantSession | null;
    try {
      active = await entry.active;
    } catch (cause) {
      throw new DeskpilotError('store_unavailable', { detail: 'The session store is unavailable.', cause });
    }
    if (!active) throw refused('The session this chat grant was issued for has ended. Sign in again.');
    return active;
  };
}

/** A session as {@link GrantSessionsOptions.capabilities} reads it now. */
export interface LiveSession {
  projectKey: string;
  userEmail: string;
  role: string;
  capabilities: Record<string, boolean>;
}

/** A grant's session found live: what it is now, when the check reads it (`capabilities`). */
export interface LiveGrantSession {
  session?: LiveSession;
}

/** One read of a grant's session, from whichever of the two the options give. */
function liveSessionRead(options: GrantSessionsOptions): (sessionId: string) => Promise<LiveGrantSession | null> {
  const { isActive, capabilities } = options;
  if (capabilities && isActive) throw new TypeError('grantSessions: give isActive or capabilities, not both');
  if (capabilities)
    return async (sessionId) => {
      const session = await capabilities(sessionId);
      return session && { session };
    };
  if (isActive) return async (sessionId) => ((await isActive(sessionId)) ? {} : null);
  throw new TypeError('grantSessions needs isActive or capabilities');
}

/**
 * `isActive` for {@link GrantSessionsOptions} from a session store the chat service can read (the
 * session service's, e.g. `createPostgresSessionStore` on the same database — without its read cache,
 * which would not see another process's revocations): live while stored and before both expiries.
 *
 * @example
 * createChatHandler({ …, contextSecret, grantSessions: { isActive: isSessionActive(createPostgresSessionStore(client)) } });
 */
export function isSessionActive(
  store: Pick<SessionStore, 'get'>,
  now: () => number = Date.now,
): (sessionId: string) => Promise<boolean> {
  return async (sessionId) => {
    const record = await store.get(sessionId);
    return record !== null && isLive(record, now());
  };
}

/** Options of {@link sessionCapabilities}: the session service's stores, as the chat service can read them. */
export interface SessionCapabilitiesOptions {
  /** The session store, read uncached (another process revokes). */
  sessions: Pick<SessionStore, 'get'>;
  /** The user directory: the session's user must still be a member of its project and client. */
  users: Pick<UserDirectory, 'getAccount'>;
  /** The projects' role policies; without it every project has `defaultRolePolicy`. */
  policies?: Pick<RolePolicyStore, 'get'>;
  /**
   * The flags a policy may name: the session service's registry (its `team.capabilities`, the
   * reference server's `CAPABILITIES`). A flag outside it is not held to the session: the grant's
   * word stands for it. @default builtinCapabilities
   */
  capabilities?: CapabilityRegistry;
  now?: () => number;
}

/**
 * `capabilities` for {@link GrantSessionsOptions}, from stores the chat service shares with the
 * session service (one Postgres database): the flags the member's role has under the project's policy
 * now, or null when the session ended or its user is no longer a member there.
 *
 * @example
 * createChatHandler({ …, contextSecret, grantSessions: { capabilities: sessionCapabilities({
 *   sessions: createPostgresSessionStore(client), users: stores.userDirectory, policies: stores.rolePolicyStore }) } });
 */
export function sessionCapabilities(
  options: SessionCapabilitiesOptions,
): (sessionId: string) => Promise<LiveSession | null> {
  const now = options.now ?? Date.now;
  return async (sessionId) => {
    const record = await options.sessions.get(sessionId);
    if (!record || !isLive(record, now())) return null;
    const account = await options.users.getAccount(record.userId);
    const membership = account && findMembership(account, record.projectKey, record.clientId);
    if (!membership) return null;
    const policy = (await options.policies?.get(record.projectKey)) ?? null;
    const registry = options.capabilities ?? builtinCapabilities;
    return {
      projectKey: record.projectKey,
      userEmail: account.user.email,
      role: membership.role,
      capabilities: capabilitiesOf(policy ?? defaultRolePolicy, membership.role, registry),
    };
  };
}
