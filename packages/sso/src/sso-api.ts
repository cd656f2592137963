import * as z from 'zod/mini';
import { declareRoute } from '@deskpilot/core/routes';

/** The body of `POST /sessions/sso/discover`. */
export const ssoDiscoverBody = z.strictObject({ email: z.string().check(z.trim(), z.minLength(3), z.maxLength(320)) });
/** The body of `POST /sessions/sso/logout`: `{}`. */
export const ssoLogoutBody = z.strictObject({});
/** The query of `GET /sessions/sso/start`. */
export const ssoStartQuery = z.object({
  provider: z.string(),
  projectKey: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
  reauthenticate: z.optional(
    z
      .enum(['true', 'false'])
      .check(
        z.describe('true: the person authenticates at the provider now (prompt=login, max_age=0), as a step-up asks.'),
      ),
  ),
});

const redirected = {
  status: 302,
  description: 'To the identity provider, or back to the landing page.',
  headers: ['location', 'set-cookie'],
} as const;

/** The single sign-on routes, served when the session service has `sso` (404 `not_found` otherwise). */
export const ssoRoutes = {
  discoverIdentityProvider: declareRoute({
    operationId: 'discoverIdentityProvider',
    method: 'POST',
    path: '/sessions/sso/discover',
    summary: "Home-realm discovery: the identity provider of an email's domain.",
    auth: 'none',
    body: ssoDiscoverBody,
    answer: {
      status: 200,
      description: 'The provider.',
      schema: z.object({ provider: z.object({ id: z.string(), name: z.string() }) }),
    },
    errors: ['not_found'],
  }),
  startSingleSignOn: declareRoute({
    operationId: 'startSingleSignOn',
    method: 'GET',
    path: '/sessions/sso/start',
    summary:
      "A browser navigation: to the provider's authorization endpoint (PKCE, state, nonce), with the sealed flow cookie.",
    auth: 'none',
    query: ssoStartQuery,
    answer: redirected,
    errors: ['not_found', 'rate_limited', 'upstream_unavailable'],
  }),
  finishSingleSignOn: declareRoute({
    operationId: 'finishSingleSignOn',
    method: 'GET',
    path: '/sessions/sso/callback',
    summary:
      "The provider's redirect (its query, `code` and `state` or `error`, is the provider's, checked by the OpenID Connect client): to the landing page signed in (`Set-Cookie`), or with `#sso-error=<reason>`.",
    auth: 'none',
    answer: redirected,
    errors: ['rate_limited', 'store_unavailable', 'not_found'],
  }),
  singleSignOnLogout: declareRoute({
    operationId: 'singleSignOnLogout',
    method: 'POST',
    path: '/sessions/sso/logout',
    summary:
      'Log out here (the session revoked, its cookie cleared) and get where to sign out at the identity provider too (RP-initiated logout): its end-session URL with the ID token as `id_token_hint`, or null.',
    auth: 'none',
    body: ssoLogoutBody,
    answer: {
      status: 200,
      description: 'Logged out here; send the browser to `endSessionUrl` when it is not null.',
      schema: z.object({ endSessionUrl: z.nullable(z.string().check(z.meta({ format: 'uri' }))) }),
      headers: ['set-cookie'],
    },
    errors: ['store_unavailable', 'not_found'],
  }),
};
