import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import { z } from 'zod';
import { DeskpilotError } from '../../errors/deskpilot-error.js';

/** What a studio vouches for in a chat grant. */
export interface ChatGrantClaims {
  userEmail: string;
  userRole: string;
  projectKey: string;
  businessType: 'b2c' | 'b2b';
  /** Capability flags granted; missing flags fall back to least privilege. */
  capabilities: Record<string, boolean>;
  /**
   * The id of the session-service session the grant was minted from (`session.id`, the public half of
   * its token; the `sid` claim). A chat service that can see that session's store refuses the grant
   * once the session is revoked (`createChatHandler({ grantSessions })`).
   */
  sessionId?: string;
}

/**
 * What a grant may be used for: `chat`, the page's chat requests (`context.grant`); `tools`, another
 * agent's calls of the chat's tools (an MCP client's bearer token); `usage`, a chat module's routes
 * for a project its holder administers from a session in another (the Usage API: a project's admin,
 * or its organisation's). Each is refused where another is expected: an agent holding a tools grant
 * cannot answer the approval cards its calls propose, and a usage grant opens no conversation.
 */
export type ChatGrantUse = 'chat' | 'tools' | 'usage';

const audiences: Record<ChatGrantUse, string> = {
  chat: 'deskpilot-chat',
  tools: 'deskpilot-tools',
  usage: 'deskpilot-usage',
};

/** A verified grant: what it vouches for, and the use it was signed for. */
export type VerifiedChatGrant = ChatGrantClaims & { use: ChatGrantUse };
const claimsSchema = z.object({
  sub: z.string().min(3).max(320),
  role: z.string().min(1).max(64),
  project: z.string().min(1).max(200),
  business: z.enum(['b2c', 'b2b']),
  caps: z.record(z.string(), z.boolean()),
  sid: z.string().min(1).max(200).optional(),
});

/** Limits on a grant's timestamps, shared by the studio that signs and the chat service that verifies. */
export interface ChatGrantPolicy {
  /** Longest allowed `exp - iat`, and oldest allowed `iat`, in seconds. @default 600 */
  maxLifetimeSeconds?: number;
  /** Clock skew tolerated between the studio and the chat service, on `iat` and `exp`, in seconds. @default 60 */
  clockToleranceSeconds?: number;
}

/** Options of {@link signChatGrant}. */
export interface SignChatGrantOptions extends Pick<ChatGrantPolicy, 'maxLifetimeSeconds'> {
  /** Lifetime of the grant; at most `maxLifetimeSeconds`. @default 300 */
  expiresInSeconds?: number;
  /** What the grant is for. @default 'chat' */
  use?: ChatGrantUse;
  /** Clock in epoch milliseconds. @default Date.now */
  now?: () => number;
}

/** Options of {@link verifyChatGrant}. */
export interface VerifyChatGrantOptions extends ChatGrantPolicy {
  /** What the grant must be for (one of them): one signed for another use is refused. @default 'chat' */
  use?: ChatGrantUse | readonly ChatGrantUse[];
  /** Clock in epoch milliseconds. @default Date.now */
  now?: () => number;
}

/** The policy with its defaults; throws a TypeError for a value that cannot be meant (a bug, not a bad grant). */
export function resolveChatGrantPolicy(policy: ChatGrantPolicy = {}): Required<ChatGrantPolicy> {
  const maxLifetimeSeconds = policy.maxLifetimeSeconds ?? 600;
  const clockToleranceSeconds = policy.clockToleranceSeconds ?? 60;
  if (!Number.isFinite(maxLifetimeSeconds) || maxLifetimeSeconds <= 0)
    throw new TypeError(`maxLifetimeSeconds must be a positive number of seconds, got ${maxLifetimeSeconds}`);
  if (!Number.isFinite(clockToleranceSeconds) || clockToleranceSeconds < 0)
    throw new TypeError(
      `clockToleranceSeconds must be zero or a positive number of seconds, got ${clockToleranceSeconds}`,
    );
  return { maxLifetimeSeconds, clockToleranceSeconds };
}

function key(secret: string): Uint8Array {
  if (secret.length < 32) throw new TypeError('The chat context secret must be at least 32 characters');
  return new TextEncoder().encode(secret);
}

/**
 * Signs a short-lived chat grant (HS256 JWS) for the page of a signed-in user. The studio calls it
 * with the session it trusts; the chat service then takes identity and flags from the grant alone.
 * A lifetime beyond `maxLifetimeSeconds` is refused (TypeError): the chat service would refuse it too.
 *
 * @example
 * const grant = await signChatGrant({ userEmail, userRole, projectKey, businessType: 'b2c', capabilities }, secret);
 */
export async function signChatGrant(
  claims: ChatGrantClaims,
  secret: string,
  options: SignChatGrantOptions = {},
): Promise<string> {
  const { maxLifetimeSeconds } = resolveChatGrantPolicy({ maxLifetimeSeconds: options.maxLifetimeSeconds });
  const lifetime = options.expiresInSeconds ?? 300;
  if (!Number.isInteger(lifetime) || lifetime <= 0 || lifetime > maxLifetimeSeconds) {
    throw new TypeError(
      `expiresInSeconds must be a whole number of seconds from 1 to ${maxLifetimeSeconds}, got ${lifetime}`,
    );
  }
  const issuedAt = Math.floor((options.now ?? Date.now)() / 1000);
  return new SignJWT({
    role: claims.userRole,
    project: claims.projectKey,
    business: claims.businessType,
    caps: claims.capabilities,
    ...(claims.sessionId === undefined ? {} : { sid: claims.sessionId }),
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.userEmail.trim().toLowerCase())
    .setAudience(audiences[options.use ?? 'chat'])
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + lifetime)
    .sign(key(secret));
}

/**
 * Verifies a chat grant; throws `unauthenticated` for a missing, malformed, forged or expired one, one
 * without `iat`, issued in the future or too long ago, or living longer than `maxLifetimeSeconds`.
 */
export async function verifyChatGrant(
  grant: unknown,
  secret: string,
  options: VerifyChatGrantOptions = {},
): Promise<VerifiedChatGrant> {
  const { maxLifetimeSeconds, clockToleranceSeconds } = resolveChatGrantPolicy(options);
  const uses: readonly ChatGrantUse[] = typeof options.use === 'string' ? [options.use] : (options.use ?? ['chat']);
  if (typeof grant !== 'string' || grant.length === 0 || grant.length > 8192) {
    throw new DeskpilotError('unauthenticated', { detail: 'A signed chat grant is required.' });
  }
  try {
    // jose checks `exp` and `nbf` with the tolerance, and with `maxTokenAge` also refuses an `iat`
    // older than the maximum lifetime or later than now plus the tolerance.
    const { payload } = await jwtVerify(grant, key(secret), {
      algorithms: ['HS256'],
      audience: uses.map((use) => audiences[use]),
      currentDate: new Date((options.now ?? Date.now)()),
      requiredClaims: ['sub', 'exp', 'iat'],
      maxTokenAge: maxLifetimeSeconds,
      clockTolerance: clockToleranceSeconds,
    });
    // What jose leaves open: a fresh grant whose `exp` lies years ahead would outlive any revocation.
    const lifetime = payload.exp! - payload.iat!;
    if (!(lifetime > 0 && lifetime <= maxLifetimeSeconds))
      throw new DeskpilotError('unauthenticated', { detail: 'The chat grant lives longer than allowed.' });
    const claims = claimsSchema.parse(payload);
    const audience = [payload.aud].flat();
    return {
      use: uses.find((use) => audience.includes(audiences[use]))!,
      userEmail: claims.sub,
      userRole: claims.role,
      projectKey: claims.project,
      businessType: claims.business,
      capabilities: claims.caps,
      ...(claims.sid === undefined ? {} : { sessionId: claims.sid }),
    };
  } catch (cause) {
    if (DeskpilotError.isInstance(cause)) throw cause;
    throw new DeskpilotError('unauthenticated', { detail: grantProblem(cause), cause });
  }
}

/** A detail that names the failed check without echoing anything from the grant. */
function grantProblem(cause: unknown): string {
  if (cause instanceof joseErrors.JWTExpired) return 'The chat grant has expired.';
  if (
    cause instanceof joseErrors.JWTClaimValidationFailed &&
    cause.reason === 'check_failed' &&
    (cause.claim === 'iat' || cause.claim === 'nbf')
  )
    return 'The chat grant is not valid yet.';
  return 'The chat grant is invalid.';
}
