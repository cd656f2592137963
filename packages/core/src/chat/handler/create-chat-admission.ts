import { DeskpilotError } from '../../errors/deskpilot-error.js';
import { addressBucket } from '../../http/address-bucket.js';
import { createClientAddressResolver } from '../../http/create-client-address-resolver.js';
import type { HttpRequest } from '../../http/http-request.js';
import { missingClientAddressError } from '../../http/missing-client-address-error.js';
import { createSlidingWindowLimiter } from '../../limiter/create-sliding-window-limiter.js';
import type { RateLimitName } from '../../events/deskpilot-event.js';
import { retryAfterSeconds, type RateLimitDecision, type RateLimiter } from '../../limiter/rate-limit-decision.js';

/** A rate limit policy: requests per key within a window, and how many keys an in-process limiter keeps. */
export interface ChatRateLimitPolicy {
  limit?: number;
  windowMs?: number;
  maxKeys?: number;
}

/** A rate limit of `createChatHandler`'s `limits`: its policy, and a shared limiter (Redis) that counts it instead of the process. */
export interface ChatRateLimit {
  policy?: ChatRateLimitPolicy;
  /** A shared limiter (`createRedisLimiter`) for replicas; `policy` still names the limit in headers. @default in process */
  limiter?: RateLimiter;
}

/** Options of {@link createChatAdmission}. */
export interface ChatAdmissionOptions {
  /** Per user. @default { policy: { limit: 20, windowMs: 60000, maxKeys: 100000 } } */
  user?: ChatRateLimit | undefined;
  /** Per client address. @default { policy: { limit: 10 × user limit, windowMs: user windowMs, maxKeys: 100000 } } */
  address?: ChatRateLimit | false | undefined;
  /** @default [] */
  trustedProxies?: readonly string[] | undefined;
  /** @default true */
  requireClientAddress?: boolean | undefined;
  now: () => number;
  /** Told which limit refused a request. */
  onRefused?: ((limit: RateLimitName) => void) | undefined;
  /** The policy's name in `RateLimit` headers and events (the address cap is `<name>-address`). @default 'chat' */
  name?: 'chat' | 'chat-history' | 'chat-tools' | undefined;
}

/** A request let in, with the per-user `RateLimit` headers to answer; or refused, with a `rate_limited` error. */
export type ChatAdmissionResult =
  { allowed: true; headers: Record<string, string> } | { allowed: false; error: DeskpilotError };

/** Counts chat requests per client address, then per user. */
export interface ChatAdmission {
  admit(request: HttpRequest, userEmail: string): Promise<ChatAdmissionResult>;
}

/** The 429 for a refused decision, with `Retry-After` and `RateLimit` headers (naming the policy, never the user or the address). */
function refusal(
  decision: RateLimitDecision & { allowed: false },
  name: string,
  policyHeader: string,
): ChatAdmissionResult {
  const retryAfter = String(retryAfterSeconds(decision));
  return {
    allowed: false,
    error: new DeskpilotError('rate_limited', {
      detail: 'Too many chat requests. Try again shortly.',
      headers: {
        'retry-after': retryAfter,
        'ratelimit-policy': policyHeader,
        ratelimit: `"${name}";r=0;t=${retryAfter}`,
      },
    }),
  };
}

/**
 * Creates the chat admission: a per-address cap first (so that one client cannot spray `userEmail`s
 * through the per-user key space), then the per-user limit. A request with no client address while
 * one is required throws: the host is misconfigured.
 */
export function createChatAdmission(options: ChatAdmissionOptions): ChatAdmission {
  const { now } = options;
  const userPolicy = options.user?.policy;
  const policy = { limit: userPolicy?.limit ?? 20, windowMs: userPolicy?.windowMs ?? 60_000 };
  const limiter =
    options.user?.limiter ?? createSlidingWindowLimiter({ ...policy, maxKeys: userPolicy?.maxKeys ?? 100_000, now });
  const name = options.name ?? 'chat';
  const addressName = `${name}-address` as const;
  const policyHeader = `"${name}";q=${policy.limit};w=${Math.ceil(policy.windowMs / 1000)}`;
  const address = options.address === false ? undefined : (options.address ?? {});
  const addressPolicy = address && {
    limit: address.policy?.limit ?? policy.limit * 10,
    windowMs: address.policy?.windowMs ?? policy.windowMs,
  };
  const addressLimiter =
    addressPolicy &&
    (address.limiter ??
      createSlidingWindowLimiter({ ...addressPolicy, maxKeys: address.policy?.maxKeys ?? 100_000, now }));
  const addressPolicyHeader =
    addressPolicy && `"${addressName}";q=${addressPolicy.limit};w=${Math.ceil(addressPolicy.windowMs / 1000)}`;
  const clientAddress = createClientAddressResolver({ trustedProxies: options.trustedProxies ?? [] });
  const requireClientAddress = options.requireClientAddress ?? true;

  return {
    async admit(request, userEmail) {
      if (addressLimiter && addressPolicyHeader) {
        if (!request.clientAddress && requireClientAddress)
          throw missingClientAddressError('createChatHandler', 'the per-address admission cap');
        const decision = await addressLimiter.check(addressBucket(clientAddress(request)));
        if (!decision.allowed) {
          options.onRefused?.(addressName);
          return refusal(decision, addressName, addressPolicyHeader);
        }
      }
      const decision = await limiter.check(userEmail);
      if (!decision.allowed) {
        options.onRefused?.(name);
        return refusal(decision, name, policyHeader);
      }
      return {
        allowed: true,
        headers: {
          'ratelimit-policy': policyHeader,
          ratelimit: `"${name}";r=${decision.remaining};t=${Math.ceil(decision.resetMs / 1000)}`,
        },
      };
    },
  };
}
