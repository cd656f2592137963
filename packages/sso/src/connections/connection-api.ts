import * as z from 'zod/mini';
import { declareRoute } from '@deskpilot/core/routes';

// ES2024's `String.prototype.isWellFormed` (Node ≥ 20); the project's TypeScript lib is ES2023.
const wellFormed = (text: string) => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

// Control characters (C0 and C1), and the invisible ones that make a name shown on the sign-in page
// read as another: zero-width, bidirectional overrides and isolates, the byte-order mark.
const invisible = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;

/** One line of valid, visible text: trimmed, 1 to `max` characters. */
const line = (max: number) =>
  z.string().check(
    z.trim(),
    z.minLength(1),
    z.maxLength(max),
    z.refine((text) => !invisible.test(text), 'Must be one line of visible text'),
    z.refine(wellFormed, 'Must be valid text'),
  );

/** A client secret as the provider issued it: never trimmed (a space may be part of it), 1 to 2,000 characters. */
const secret = z.string().check(
  z.minLength(1),
  z.maxLength(2000),
  z.refine((text) => !invisible.test(text), 'Must be one line of text'),
);

/** A lower-case DNS name of at least two labels: an email domain a connection is the authority for. */
const domain = z
  .string()
  .check(
    z.maxLength(253),
    z.regex(
      /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/,
      'Must be a lower-case domain name (acme.com)',
    ),
  );

/** What an organisation's admin may set of a provider beyond its client: scopes and the claims its ID tokens must carry. */
const settings = z.strictObject({
  scopes: z.optional(
    z
      .array(z.string().check(z.regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/, 'Must be an OAuth scope')))
      .check(z.maxLength(20)),
  ),
  emailVerifiedClaim: z.optional(line(100)),
  requiredClaims: z.optional(
    z
      .record(line(100), z.union([line(500), z.boolean(), z.array(line(500)).check(z.maxLength(20))]))
      .check(z.refine((claims) => Object.keys(claims).length <= 20, 'At most 20 claims')),
  ),
  roles: z.optional(
    z.strictObject({
      claim: line(100),
      rules: z
        .array(z.strictObject({ group: line(200), projectKey: line(200), clientId: line(200), role: line(100) }))
        .check(z.minLength(1), z.maxLength(200)),
    }),
  ),
  signInRequired: z.optional(z.boolean()),
});

const connectionFields = {
  name: line(100),
  issuer: line(2000),
  clientId: line(500),
  tokenEndpointAuthMethod: z.optional(z.enum(['client_secret_basic', 'client_secret_post'])),
  domains: z.array(domain).check(z.minLength(1), z.maxLength(50)),
  settings: z.optional(settings),
  enabled: z.optional(z.boolean()),
};

/** The query of `GET /sessions/organizations/sso-connections`. */
export const connectionsQuery = z.strictObject({ organization: line(200) });
/** The body of `POST /sessions/organizations/sso-connections`: a new connection, its client secret in the clear (sealed before it is stored). */
export const createConnectionBody = z.strictObject({
  organization: line(200),
  ...connectionFields,
  clientSecret: secret,
});
/** The body of `POST /sessions/organizations/sso-connections/update`: what changes, from the version read; no `clientSecret` keeps it. */
export const updateConnectionBody = z.strictObject({
  organization: line(200),
  id: line(200),
  version: z.number().check(z.int(), z.minimum(1)),
  name: z.optional(connectionFields.name),
  issuer: z.optional(connectionFields.issuer),
  clientId: z.optional(connectionFields.clientId),
  clientSecret: z.optional(secret),
  tokenEndpointAuthMethod: connectionFields.tokenEndpointAuthMethod,
  domains: z.optional(connectionFields.domains),
  settings: connectionFields.settings,
  enabled: connectionFields.enabled,
});
/** The body of `POST /sessions/organizations/sso-connections/test`. */
export const testConnectionBody = z.strictObject({
  organization: line(200),
  id: line(200),
  /** A dry run of the connection's `roles`: the groups someone's ID token would list. */
  groups: z.optional(z.array(line(200)).check(z.maxLength(200))),
});
/** The body of `POST /sessions/organizations/sso-connections/delete`. */
export const deleteConnectionBody = z.strictObject({ organization: line(200), id: line(200) });

/** A connection as its organisation's admins see it: never its secret, sealed or not. */
const connection = z.object({
  id: z.string(),
  organization: z.string(),
  name: z.string(),
  issuer: z.string(),
  clientId: z.string(),
  tokenEndpointAuthMethod: z.enum(['client_secret_basic', 'client_secret_post']),
  domains: z.array(z.string()),
  settings: z.object({
    scopes: z.optional(z.array(z.string())),
    emailVerifiedClaim: z.optional(z.string()),
    requiredClaims: z.optional(z.record(z.string(), z.union([z.string(), z.boolean(), z.array(z.string())]))),
    roles: z.optional(
      z.object({
        claim: z.string(),
        rules: z.array(z.object({ group: z.string(), projectKey: z.string(), clientId: z.string(), role: z.string() })),
      }),
    ),
    signInRequired: z.optional(z.boolean()),
  }),
  enabled: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: z.number(),
});

/**
 * An organisation's own identity provider connections, edited by its admins (served when the single
 * sign-on module is given `connections` and the service keeps organisations). Anyone but one of the
 * organisation's admins gets 404, as for no such organisation.
 */
export const ssoConnectionRoutes = {
  ssoConnections: declareRoute({
    operationId: 'ssoConnections',
    method: 'GET',
    path: '/sessions/organizations/sso-connections',
    summary: "An organisation's identity provider connections (its admins only), oldest first; never a secret.",
    auth: 'session',
    query: connectionsQuery,
    answer: {
      status: 200,
      description: 'The connections.',
      schema: z.object({ organization: z.string(), connections: z.array(connection) }),
    },
    errors: ['not_found', 'store_unavailable'],
  }),
  createSsoConnection: declareRoute({
    operationId: 'createSsoConnection',
    method: 'POST',
    path: '/sessions/organizations/sso-connections',
    summary:
      "One of an organisation's admins connects its identity provider, for domains the operator lists for the organisation (403 `forbidden` otherwise): its client secret sealed at rest, each domain the connection's alone (across organisations); recorded in each of its projects' trails.",
    auth: 'session',
    body: createConnectionBody,
    answer: { status: 201, description: 'The connection.', schema: z.object({ connection }) },
    errors: ['not_found', 'forbidden', 'conflict', 'store_unavailable'],
  }),
  updateSsoConnection: declareRoute({
    operationId: 'updateSsoConnection',
    method: 'POST',
    path: '/sessions/organizations/sso-connections/update',
    summary:
      "One of its admins changes a connection (enables or disables it among the rest) from the version they read: 409 `conflict` when it changed meanwhile or a domain is another's; recorded in each project's trail.",
    auth: 'session',
    body: updateConnectionBody,
    answer: { status: 200, description: 'The connection as it now is.', schema: z.object({ connection }) },
    errors: ['not_found', 'forbidden', 'conflict', 'store_unavailable'],
  }),
  ssoDomains: declareRoute({
    operationId: 'ssoDomains',
    method: 'GET',
    path: '/sessions/organizations/sso-domains',
    summary:
      "The email domains the operator lists for an organisation (its admins only), each with the organisation's connection that is its authority, if any: what a connection may claim.",
    auth: 'session',
    query: connectionsQuery,
    answer: {
      status: 200,
      description: 'The domains, in order.',
      schema: z.object({
        organization: z.string(),
        domains: z.array(
          z.object({
            domain: z.string(),
            connection: z.nullable(z.object({ id: z.string(), name: z.string(), enabled: z.boolean() })),
          }),
        ),
      }),
    },
    errors: ['not_found', 'store_unavailable'],
  }),
  testSsoConnection: declareRoute({
    operationId: 'testSsoConnection',
    method: 'POST',
    path: '/sessions/organizations/sso-connections/test',
    summary:
      'One of its admins tests a connection now, enabled or not: its secret opens, its discovery document, its signing keys, its token-endpoint authentication; which of its domains count and which projects a sign-in through it may open; and with `groups`, a dry run of its `roles`: the role someone in those groups would hold in each project they name. Changes nothing.',
    auth: 'session',
    body: testConnectionBody,
    answer: {
      status: 200,
      description: 'Each check, passed or not, with what was found.',
      schema: z.object({
        id: z.string(),
        ok: z.boolean(),
        checks: z.array(
          z.object({
            check: z.enum(['secret', 'discovery', 'keys', 'token_endpoint_auth']),
            ok: z.boolean(),
            detail: z.string(),
          }),
        ),
        domains: z.array(z.string()),
        projects: z.array(z.string()),
        roles: z.optional(
          z.array(z.object({ projectKey: z.string(), clientId: z.string(), role: z.nullable(z.string()) })),
        ),
      }),
    },
    errors: ['not_found', 'store_unavailable'],
  }),
  deleteSsoConnection: declareRoute({
    operationId: 'deleteSsoConnection',
    method: 'POST',
    path: '/sessions/organizations/sso-connections/delete',
    summary: "One of its admins deletes a connection (its domains free again); recorded in each project's trail.",
    auth: 'session',
    body: deleteConnectionBody,
    answer: { status: 204, description: 'Deleted.' },
    errors: ['not_found', 'store_unavailable'],
  }),
};
