import * as z from 'zod/mini';

const membership = z.object({ projectKey: z.string(), clientId: z.string(), role: z.string() });

/**
 * A {@link Session} as the session routes answer it: what a proxy checks and the OpenAPI document
 * describes. `user.emailVerified` may be absent, as from a session service of an earlier release
 * during a rolling upgrade: a proxy must not refuse every request until all replicas are new.
 */
export const sessionSchema = z.object({
  id: z.string(),
  user: z.object({ id: z.string(), email: z.string(), name: z.string(), emailVerified: z.optional(z.boolean()) }),
  projectKey: z.string(),
  clientId: z.string(),
  role: z.string(),
  memberships: z.array(membership),
  createdAt: z.string(),
  expiresAt: z.string(),
  idleExpiresAt: z.string(),
});
