import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import { z } from 'zod';
import { DeskpilotError } from '../errors/deskpilot-error.js';

/** What a studio vouches for in a chat grant. */
export interface ChatGrantClaims {
  userEmail: string;
  userRole: string;
  projectKey: string;
  businessType: 'b2c' | 'b2b';
  /** Capability flags granted; missing flags fall back to least privilege. */
  capabilities: Record<string, boolean>;
}

const audience = 'deskpilot-chat';
const claimsSchema = z.object({
  sub: z.string().min(3).max(320),
  role: z.string().min(1).max(64),
  project: z.string().min(1).max(200),
  business: z.enum(['b2c', 'b2b']),
  caps: z.record(z.string(), z.boolean()),
});

function key(secret: string): Uint8Array {
  if (secret.length < 32) throw new TypeError('The chat context secret must be at least 32 characters');
  return new TextEncoder().encode(secret);
}

/**
 * Signs a short-lived chat grant (HS256 JWS) for the page of a signed-in user. The studio calls it
 * with the session it trusts; the chat service then takes identity and flags from the grant alone.
 *
 * @example
 * const grant = await signChatGrant({ userEmail, userRole, projectKey, businessType: 'b2c', capabilities }, secret);
 */
export async function signChatGrant(claims: ChatGrantClaims, secret: string, options: { expiresInSeconds?: number; now?: () => number } = {}): Promise<string> {
  const issuedAt = Math.floor((options.now ?? Date.now)() / 1000);
  return new SignJWT({ role: claims.userRole, project: claims.projectKey, business: claims.businessType, caps: claims.capabilities })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.userEmail.trim().toLowerCase())
    .setAudience(audience)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + (options.expiresInSeconds ?? 300))
    .sign(key(secret));
}

/** Verifies a chat grant; throws `unauthenticated` for a missing, malformed, forged or expired one. */
export async function verifyChatGrant(grant: unknown, secret: string, options: { now?: () => number } = {}): Promise<ChatGrantClaims> {
  if (typeof grant !== 'string' || grant.length === 0 || grant.length > 8192) {
    throw new DeskpilotError('unauthenticated', { detail: 'A signed chat grant is required.' });
  }
  try {
    const { payload } = await jwtVerify(grant, key(secret), {
      algorithms: ['HS256'],
      audience,
      currentDate: new Date((options.now ?? Date.now)()),
      requiredClaims: ['sub', 'exp', 'iat'],
    });
    const claims = claimsSchema.parse(payload);
    return { userEmail: claims.sub, userRole: claims.role, projectKey: claims.project, businessType: claims.business, capabilities: claims.caps };
  } catch (cause) {
    const expired = cause instanceof joseErrors.JWTExpired;
    throw new DeskpilotError('unauthenticated', { detail: expired ? 'The chat grant has expired.' : 'The chat grant is invalid.', cause });
  }
}
