import * as z from 'zod/mini';
import { declareRoute } from '@deskpilot/core/routes';

// ES2024's `String.prototype.isWellFormed` (Node ≥ 20); the project's TypeScript lib is ES2023.
const wellFormed = (text: string) => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** One line of valid, visible text: trimmed, 1 to `max` characters. */
const line = (max: number) =>
  z.string().check(
    z.trim(),
    z.minLength(1),
    z.maxLength(max),
    z.refine((text) => !/[\u0000-\u001f\u007f-\u009f]/.test(text), 'Must be one line of text'),
    z.refine(wellFormed, 'Must be valid text'),
  );

/** A whole number in a query, 1 to `max`. */
const whole = (max: number) =>
  z.string().check(
    z.regex(/^[1-9][0-9]{0,15}$/, 'Must be a whole number'),
    z.refine((value) => Number(value) <= max, `At most ${max}`),
  );

const token = z.object({
  id: z.string(),
  name: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.nullable(z.string()),
});

/**
 * The routes through which an organisation's admins give its identity provider a SCIM token and see
 * its directory. Anyone but one of the organisation's admins gets 404, as for no such organisation.
 */
export const scimRoutes = {
  scimDirectory: declareRoute({
    operationId: 'scimDirectory',
    method: 'GET',
    path: '/sessions/organizations/scim',
    summary:
      "An organisation's SCIM directory (its admins only): its tokens (never a token itself), when its provider last called, how many users and groups it pushed.",
    auth: 'session',
    query: z.strictObject({ organization: line(200) }),
    answer: {
      status: 200,
      description: 'The directory.',
      schema: z.object({
        organization: z.string(),
        tokens: z.array(token),
        lastSync: z.nullable(z.string()),
        users: z.number(),
        groups: z.number(),
      }),
    },
    errors: ['not_found', 'store_unavailable'],
  }),
  scimDirectoryUsers: declareRoute({
    operationId: 'scimDirectoryUsers',
    method: 'GET',
    path: '/sessions/organizations/scim/users',
    summary:
      "A page of the users an organisation's directory pushed (its admins only), in the order they came: each one's userName, whether it is active, and when it last changed.",
    auth: 'session',
    query: z.strictObject({
      organization: line(200),
      startIndex: z.optional(whole(1_000_000_000)),
      count: z.optional(whole(100)),
    }),
    answer: {
      status: 200,
      description: 'The page (`startIndex` 1-based, as SCIM counts; `count` 50 unless given, at most 100).',
      schema: z.object({
        organization: z.string(),
        total: z.number(),
        startIndex: z.number(),
        users: z.array(
          z.object({
            id: z.string(),
            userName: z.string(),
            externalId: z.nullable(z.string()),
            active: z.boolean(),
            updatedAt: z.string(),
          }),
        ),
      }),
    },
    errors: ['not_found', 'store_unavailable'],
  }),
  createScimToken: declareRoute({
    operationId: 'createScimToken',
    method: 'POST',
    path: '/sessions/organizations/scim/tokens',
    summary:
      "One of an organisation's admins creates a bearer token for its identity provider's SCIM client: shown in this answer only (kept as a digest), at most two at a time so that one can replace the other; recorded in each of its projects' trails.",
    auth: 'session',
    body: z.strictObject({ organization: line(200), name: line(100) }),
    answer: {
      status: 201,
      description: 'The token, and its secret — shown this once.',
      schema: z.object({ token, secret: z.string() }),
    },
    errors: ['not_found', 'conflict', 'store_unavailable'],
  }),
  revokeScimToken: declareRoute({
    operationId: 'revokeScimToken',
    method: 'POST',
    path: '/sessions/organizations/scim/tokens/revoke',
    summary:
      "One of its admins revokes a token: the next request with it is 401; recorded in each of the organisation's projects' trails.",
    auth: 'session',
    body: z.strictObject({ organization: line(200), id: line(200) }),
    answer: { status: 204, description: 'Revoked.' },
    errors: ['not_found', 'store_unavailable'],
  }),
};
