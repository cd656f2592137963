import * as z from 'zod/mini';

const membership = z.object({ projectKey: z.string(), clientId: z.string(), role: z.string() });

/** A {@link Session} as the session routes answer it: what a proxy checks and the OpenAPI document describes. */
export const sessionSchema = z.object({
  id: z.string(),
  user: z.object({ id: z.string(), email: z.string(), name: z.string() }),
  projectKey: z.string(),
  clientId: z.string(),
  role: z.string(),
  memberships: z.array(membership),
  createdAt: z.string(),
  expiresAt: z.string(),
  idleExpiresAt: z.string(),
});
