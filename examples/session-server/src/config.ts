import * as z from 'zod/mini';
import {
  addressRangeList,
  flag,
  integer,
  json,
  logFormat,
  logLevel,
  loopbackOrigins,
  matching,
  metricsVariables,
  originList,
  port,
  readEnvironment,
  storageVariables,
  studioDefaultPort,
  tracingVariables,
} from '../../shared/environment.ts';

const milliseconds = integer(1);

const name = z.string().check(z.minLength(1), z.maxLength(200));
const membership = z.strictObject({ projectKey: name, clientId: name, role: name });
/** One organisation of ORGANIZATIONS: its projects, the emails of its admins, and the email domains it owns. */
const organization = z.strictObject({
  projects: z.array(name).check(z.minLength(1)),
  admins: z._default(z.array(z.string().check(z.minLength(3), z.maxLength(320))), []),
  /** The email domains it owns: the ones its admins may give their own identity provider connections. */
  domains: z._default(
    z.array(
      matching(
        /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/,
        'expected a lower-case domain name such as acme.com',
      ),
    ),
    [],
  ),
  /**
   * With SCIM: its directory's groups → project roles, the first rule whose group (display name or
   * external id) a user is in giving the role in its project (`GroupRole` of @deskpilot/scim).
   */
  groups: z._default(
    z.array(z.strictObject({ group: name, projectKey: name, clientId: name, role: name })).check(z.maxLength(200)),
    [],
  ),
});

/** One identity provider of SSO_PROVIDERS (`SsoProvider` of @deskpilot/sso). */
const ssoProvider = z.strictObject({
  id: matching(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - only'),
  name,
  issuer: z.url({ protocol: /^https?$/ }),
  clientId: name,
  clientSecret: name,
  tokenEndpointAuthMethod: z.optional(z.enum(['client_secret_basic', 'client_secret_post'])),
  domains: z.array(name).check(z.minLength(1)),
  /** Its tenant's projects, or `organization`: one of ORGANIZATIONS, whose projects they are. */
  projects: z.optional(z.array(name).check(z.minLength(1))),
  organization: z.optional(name),
  scopes: z.optional(z.array(name)),
  emailVerifiedClaim: z.optional(name),
  requiredClaims: z.optional(z.record(z.string(), z.union([z.string(), z.boolean(), z.array(z.string())]))),
  provisioning: z.optional(
    z.strictObject({
      memberships: z.array(membership),
      byClaim: z.optional(z.strictObject({ claim: name, values: z.record(z.string(), z.array(membership)) })),
    }),
  ),
});

/** Environment of the reference session server (DESIGN §5). */
export const environment = z.object({
  PORT: z._default(port, 4360),
  HOST: z._default(z.string(), '127.0.0.1'),
  /** pino's level for this process's JSON log lines (`silent`: none). */
  LOG_LEVEL: z._default(logLevel, 'info'),
  /** `json` lines, `pretty` colour lines for a person, or `auto`: pretty when stdout is a terminal. */
  LOG_FORMAT: z._default(logFormat, 'auto'),
  /** Key for the email hashes in sign-in log lines; unset, a random key per process (hashes match within one run only). */
  LOG_EMAIL_HASH_KEY: z.optional(z.string().check(z.minLength(32, 'must be at least 32 characters'))),
  COOKIE_PREFIX: z._default(matching(/^[A-Za-z0-9-]{1,64}$/), 'deskpilot'),
  COOKIE_SECURE: z._default(flag, true),
  /** Exact as given when set; unset (development), the studio's loopback origins (`localhost`, `127.0.0.1`, `[::1]`) on its default port. */
  ALLOWED_ORIGINS: z._default(originList, loopbackOrigins(studioDefaultPort)),
  TRUSTED_PROXIES: z._default(addressRangeList, []),
  SESSION_PEPPER: z.optional(z.string().check(z.minLength(16))),
  SESSION_IDLE_TIMEOUT_MS: z._default(milliseconds, 2 * 60 * 60 * 1000),
  SESSION_ABSOLUTE_TIMEOUT_MS: z._default(milliseconds, 12 * 60 * 60 * 1000),
  SEED_DEMO_USERS: z._default(flag, true),
  /**
   * Organisations above projects, as JSON: `{"acme":{"projects":["acme-b2c","acme-b2b"],"admins":["lead@example.com"]}}`.
   * An admin of an organisation administers each of its projects. Applied at start (projects placed,
   * admins added by email); unset with the demo users, the demo's `acme` and `globex` without admins.
   */
  ORGANIZATIONS: z.optional(z.pipe(json, z.record(name, organization))),
  /**
   * Capability flags beside the built-in ones, as JSON `{ "canUseKb": "write", "canViewKb": "read" }`:
   * what role policies may grant (the chat service's MCP servers need theirs). Writes stay off until a
   * policy grants them.
   */
  CAPABILITIES: z.optional(
    z.pipe(json, z.record(matching(/^can[A-Z][A-Za-z0-9]*$/, 'looks like canDoSomething'), z.enum(['read', 'write']))),
  ),
  /**
   * The SMTP server for password reset and verification links (`smtps://user:password@host:465`, or
   * `smtp://…:587` with STARTTLS); with it (or EMAIL_CONSOLE) the recovery routes are served.
   */
  SMTP_URL: z.optional(z.url({ protocol: /^smtps?$/ })),
  /** The sender of those emails. */
  EMAIL_FROM: z._default(z.string().check(z.minLength(3)), 'Deskpilot <no-reply@localhost>'),
  /** Development: print each email, links included, to standard error instead of sending it (without SMTP_URL). */
  EMAIL_CONSOLE: z._default(flag, false),
  /**
   * Sign-in by a link sent by email (`@deskpilot/magic-link`), opening the studio at `#magic-link=…`.
   * Needs email: SMTP_URL or EMAIL_CONSOLE.
   */
  MAGIC_LINK: z._default(flag, false),
  /** Passkeys (WebAuthn) for the studio's users: registration when signed in, and sign-in with one. */
  PASSKEYS: z._default(flag, true),
  /** The passkeys' relying party id; unset, the host name of APP_URL (a passkey belongs to that domain). */
  PASSKEY_RP_ID: z.optional(matching(/^[a-z0-9.-]{1,253}$/, 'expected a domain name such as desk.example.com')),
  /**
   * OpenID Connect identity providers, as JSON: `[{ "id", "name", "issuer", "clientId", "clientSecret",
   * "domains": [...], "provisioning"?: { "memberships": [...] } }]`. Set, the single sign-on routes are served.
   */
  SSO_PROVIDERS: z.optional(z.pipe(json, z.array(ssoProvider).check(z.minLength(1)))),
  /**
   * SCIM 2.0 at `/scim/v2` for the organisations of ORGANIZATIONS: their admins create tokens
   * (`/sessions/organizations/scim/tokens`), their identity providers push users (for the organisation's
   * `domains`) and groups (roles through its `groups`), and deactivation ends sessions at once.
   */
  SCIM: z._default(flag, false),
  /** The SCIM endpoint's public URL (resources' `meta.location`). @default http://localhost:<PORT>/scim/v2 */
  SCIM_BASE_URL: z.optional(z.url({ protocol: /^https?$/ })),
  /**
   * The keys organisations' own connections' client secrets are sealed with, as JSON
   * `[{ "id": "2026-11", "key": "<32 random bytes, base64url>" }]`, the first sealing and every one
   * opening (rotation: put the new one first). Set, the admins of ORGANIZATIONS edit their
   * connections (`/sessions/organizations/sso-connections`), for the domains listed for each.
   */
  SSO_CONNECTION_KEYS: z.optional(
    z.pipe(
      json,
      z
        .array(
          z.strictObject({
            id: matching(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, ., _ and - only'),
            key: matching(/^[A-Za-z0-9_+/-]{43}=?$/, 'expected 32 bytes as base64url'),
          }),
        )
        .check(z.minLength(1)),
    ),
  ),
  /** The callback the providers redirect to; unset, `<APP_URL origin>/sessions/sso/callback` (through the studio). */
  SSO_REDIRECT_URI: z.optional(z.url({ protocol: /^https?$/ })),
  /** Development only: identity providers on plain http. */
  SSO_ALLOW_HTTP: z._default(flag, false),
  /**
   * How long a single sign-on's callback may wait for the provider in all (token, keys, UserInfo), and
   * each call to it: below the studio's forwarder (10 s), so the browser always lands on the studio.
   */
  SSO_CALLBACK_TIMEOUT_MS: z._default(integer(100, 60_000), 8_000),
  SSO_REQUEST_TIMEOUT_MS: z._default(integer(100, 60_000), 3_000),
  /**
   * Step-up for risky approvals: the secret (≥ 32 characters) this service signs step-up proofs with,
   * shared with the chat service's STEP_UP_SECRET. Set, the step-up routes are served.
   */
  STEP_UP_SECRET: z.optional(z.string().check(z.minLength(32, 'must be at least 32 characters'))),
  /** For users without a passkey: a sign-in this recent counts as a step-up (else they type their password); 0: always the password. */
  STEP_UP_RECENT_SIGN_IN_MS: z._default(integer(0), 300_000),
  /** Audit records older than this many days are pruned (hourly; each chain stays verifiable). Unset: kept for ever. */
  AUDIT_RETENTION_DAYS: z.optional(integer(1)),
  /** Where the studio is reached: the page the emailed links open, and (its host) the passkeys' domain. */
  APP_URL: z._default(z.url({ protocol: /^https?$/ }), `http://localhost:${studioDefaultPort}`),
  /** Password checks at once; unset, the smaller of libuv's thread pool and the cores; 0 turns the bound off. */
  LOGIN_HASH_CONCURRENCY: z.optional(integer(0)),
  /** Password checks waiting for a place; past it a sign-in is 503 `unavailable` at once. Unset: 2 × LOGIN_HASH_CONCURRENCY. */
  LOGIN_HASH_QUEUE: z.optional(integer(0)),
  /** On SIGTERM or SIGINT, how long running requests may take to finish. */
  SHUTDOWN_GRACE_MS: z._default(milliseconds, 10_000),
  ...storageVariables,
  ...metricsVariables,
  ...tracingVariables,
});

export type ServerConfig = z.infer<typeof environment>;

/** Reads the whole configuration; throws one readable message naming every bad variable (never its value). */
export function readConfig(env: Record<string, string | undefined>): ServerConfig {
  return readEnvironment(environment, env);
}
