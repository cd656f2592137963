import { DeskpilotError } from '../../errors/deskpilot-error.js';
import type { SessionStore } from '../../session/session-store.js';

/** Options of `createChatHandler({ grantSessions })`: how a grant's session is checked. */
export interface GrantSessionsOptions {
  /**
   * Whether the session-service session a grant names (its `sid`) is still live — not revoked, not
   * expired: a read of the session store the chat service shares with the session service
   * ({@link isSessionActive}). A rejection refuses the request with 503 `store_unavailable` (fail closed).
   */
  isActive(sessionId: string): Promise<boolean>;
  /** How long an answer is reused: a revoked session's grants are refused at most this long after. @default 5000 */
  cacheMs?: number;
  /** Most sessions whose answer is kept (the least recently checked go first). @default 10000 */
  maxEntries?: number;
}

/**
 * The check a verified grant passes: the session it names is live. Answers are kept `cacheMs` and
 * concurrent checks of one session share one read, so a page's requests cost one store read per
 * session per `cacheMs`. A grant that names no session is refused: with the check configured, an
 * unbound grant would outlive log-out-everywhere.
 */
export function createGrantSessionCheck(
  options: GrantSessionsOptions,
  now: () => number,
): (sessionId: string | undefined) => Promise<void> {
  const cacheMs = options.cacheMs ?? 5_000;
  const maxEntries = options.maxEntries ?? 10_000;
  if (!Number.isFinite(cacheMs) || cacheMs < 0)
    throw new TypeError('grantSessions.cacheMs must be zero or a positive number');
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1)
    throw new TypeError('grantSessions.maxEntries must be a positive integer');
  const answers = new Map<string, { until: number; active: Promise<boolean> }>();
  const refused = (detail: string) => new DeskpilotError('unauthenticated', { detail });
  return async (sessionId) => {
    if (sessionId === undefined) throw refused('The chat grant names no session.');
    const time = now();
    let entry = answers.get(sessionId);
    if (!entry || entry.until <= time) {
      const active = options.isActive(sessionId);
      entry = { until: time + cacheMs, active };
      answers.delete(sessionId);
      answers.set(sessionId, entry);
      if (answers.size > maxEntries) answers.delete(answers.keys().next().value!);
      // A failed read is not kept: the next request reads again.
      active.catch(() => answers.get(sessionId) === entry && answers.delete(sessionId));
    }
    let active: boolean;
    try {
      active = await entry.active;
    } catch (cause) {
      throw new DeskpilotError('store_unavailable', { detail: 'The session store is unavailable.', cause });
    }
    if (!active) throw refused('The session this chat grant was issued for has ended. Sign in again.');
  };
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
    const time = now();
    return record !== null && time < record.expiresAt && time < record.idleExpiresAt;
  };
}
