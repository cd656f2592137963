import { createHash } from 'node:crypto';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { ProviderSignIn, SignInClient } from '@deskpilot/core/module';
import {
  hashPassword,
  normalizeEmail,
  type Account,
  type LoginResult,
  type Membership,
  type NewUser,
  type SessionContext,
  type UserDirectory,
} from '@deskpilot/core/session';
import { type IdentityLinkStore } from './identity-link-store.js';

/** One identity provider (an OpenID Provider: Okta, Entra ID, Google Workspace, Keycloak…). */
export interface SsoProvider {
  /** Names it in URLs and events: letters, digits, `-`, `_`. */
  id: string;
  /** What the sign-in page shows ("Acme (Okta)"). */
  name: string;
  /** The issuer identifier: its discovery document is `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /**
   * How this service authenticates at the token endpoint — what the client is registered with at the
   * provider: `client_secret_basic` (an `Authorization: Basic` header, the id and secret form-encoded
   * first as RFC 6749 §2.3.1 says; Okta's and Keycloak's default) or `client_secret_post` (both in the
   * form body). @default 'client_secret_post'
   */
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post';
  /** The email domains it is the home realm of: it may vouch only for addresses in them. */
  domains: readonly string[];
  /**
   * The projects of its tenant (an organisation's, a customer's): a sign-in through it opens a session
   * only in one of them — the one asked for, else the person's first membership among them — and its
   * provisioning may give memberships only there; nobody else is bound to it. A switch to another
   * project afterwards follows membership, and a step-up there does not count this provider's
   * authentication. @default every project (as does every provider without `projects`)
   */
  projects?: readonly string[];
  /** @default ["openid", "email", "profile"] */
  scopes?: readonly string[];
  /**
   * The claim that must be `true` for the email to count as verified: Entra ID sends no
   * `email_verified`, its `xms_edov` optional claim says the email's domain is verified by the tenant.
   * @default "email_verified"
   */
  emailVerifiedClaim?: string;
  /**
   * Claims that must have these values (one of them, for a list): `{ hd: 'acme.com' }` for Google, whose
   * issuer is shared by every Google account, `{ tid: '<tenant id>' }` for Entra ID.
   */
  requiredClaims?: Readonly<Record<string, string | boolean | readonly string[]>>;
  /**
   * Just-in-time provisioning: a person the provider vouches for who has no account yet gets one, with
   * these memberships (and those of `byClaim`, by the values of one claim, e.g. `groups`). Off unless
   * given: then only existing users sign in.
   */
  provisioning?: {
    memberships: readonly Membership[];
    byClaim?: { claim: string; values: Readonly<Record<string, readonly Membership[]>> };
  };
  /**
   * Roles kept in step with a claim of the ID token (`groups`) at every sign-in, in the projects its
   * rules name (an organisation's connection; written by the provider source's `applyRoles`): the
   * first rule whose group the claim lists gives the role there, and none takes the membership away.
   */
  roles?: RoleMapping;
}

/** A provider's mapping from the values of one claim (its groups) to project roles. */
export interface RoleMapping {
  /** The claim that lists the groups: a string, or a list of them. */
  claim: string;
  rules: ReadonlyArray<{ group: string; projectKey: string; clientId: string; role: string }>;
}

/**
 * What `mapping` gives someone whose ID token carries `claims`: for each project its rules name, the
 * first rule whose group the claim lists (its role and client), or null (no membership there).
 */
export function mappedRoles(
  mapping: RoleMapping,
  claims: Record<string, unknown>,
): Array<{ projectKey: string; clientId: string; role: string | null }> {
  const claimed = claims[mapping.claim];
  const groups = new Set((Array.isArray(claimed) ? claimed : [claimed]).filter((value) => typeof value === 'string'));
  const projects = [...new Set(mapping.rules.map((rule) => rule.projectKey))];
  return projects.map((projectKey) => {
    const rule = mapping.rules.find((candidate) => candidate.projectKey === projectKey && groups.has(candidate.group));
    const clientId = (rule ?? mapping.rules.find((candidate) => candidate.projectKey === projectKey)!).clientId;
    return { projectKey, clientId, role: rule?.role ?? null };
  });
}

/** Options of the session service's `sso`: OpenID Connect single sign-on on `openid-client`. */
export interface SingleSignOnOptions {
  providers: readonly SsoProvider[];
  /** The callback route as the provider redirects to it: `https://desk.example.com/sessions/sso/callback`. */
  redirectUri: string;
  /** Where the browser lands after signing in (errors as `#sso-error=<code>`): the studio. */
  landingUrl: string;
  /**
   * Key of the sealed cookie that carries a sign-in's state, nonce and PKCE verifier from start to
   * callback. Give every replica the same one. @default the service's `pepper`, else random per process
   */
  flowKey?: string;
  /** How long a sign-in may take at the provider. @default 600_000 (10 min) */
  flowTtlMs?: number;
  /**
   * Where the provider sends the browser after signing out there (RP-initiated logout, `POST
   * /sessions/sso/logout`): register it at the provider as a post-logout redirect URI. @default landingUrl
   */
  postLogoutRedirectUri?: string;
  /** Development only: a provider on plain http (a local test provider). @default false */
  allowInsecureRequests?: boolean;
  /** Each call to a provider (discovery, token, key set, UserInfo) gives up after this long. @default 3000 */
  requestTimeoutMs?: number;
  /**
   * A callback gives up on the provider after this long in all, and lands on `#sso-error=provider_error`:
   * keep it below the timeout of any forwarder in front of the service (the studio's
   * `createSessionRoutesForwarder`: 10 s by default), or the browser gets the forwarder's 502 instead.
   * @default 8000
   */
  callbackTimeoutMs?: number;
  /** How the providers are reached (discovery, tokens, keys, UserInfo): a proxy, tests. @default fetch */
  fetch?: typeof fetch;
  /** Adds a provisioned user; required with `provisioning` (the shipped directories' `addUser`). */
  addUser?: (user: NewUser) => Promise<Account>;
  /**
   * Which person at which provider (`iss` + `sub`) is which user: bound on the first sign-in, so an
   * address a provider later gives to someone else never opens the account of the person it was bound to.
   */
  identityLinks: IdentityLinkStore;
}

/** Why a single sign-on was refused (a `#sso-error=` on the landing page, and the event's outcome). */
export type SsoRefusal =
  | 'invalid_flow' // no, an expired, or another browser's flow cookie; a wrong state
  | 'provider_error' // the provider refused (a replayed code, a code of another client, a denied consent) or did not answer
  | 'invalid_token' // the provider's ID token does not verify: its signature, audience, issuer, nonce or expiry
  | 'unknown_domain' // an email outside the provider's domains
  | 'unverified_email' // the provider does not say the email is verified
  | 'no_account' // nobody with that email, and no provisioning
  | 'identity_conflict' // the account of that email is bound to another person at this provider (a reassigned address)
  | 'forbidden' // no membership in the asked project
  | 'sso_required'; // the project's organisation signs its members in at another provider (its own)

/** One check of a provider, as an organisation's admin tests a connection: passed, and what was found. */
export interface ProviderCheck {
  check: 'discovery' | 'keys' | 'token_endpoint_auth';
  ok: boolean;
  detail: string;
}

/** Single sign-on over the service's stores: discovery, start, callback. */
export interface SingleSignOn {
  /**
   * Tests a provider as a sign-in would reach it, now (nothing kept): its discovery document at its
   * issuer, its signing keys, and whether it accepts the client's token-endpoint authentication.
   */
  checkProvider(provider: SsoProvider): Promise<ProviderCheck[]>;
  /** Home-realm discovery: the provider for an email's domain, or null. */
  providerFor(email: string): Promise<{ id: string; name: string } | null>;
  /**
   * The provider's authorization URL, and the `Set-Cookie` carrying the sealed flow; null for an unknown
   * provider. `reauthenticate`: the person must authenticate at the provider now (`prompt=login`,
   * `max_age=0`, and an `auth_time` of now checked), not be let through by the provider's own session.
   */
  start(
    providerId: string,
    projectKey?: string,
    settings?: { reauthenticate?: boolean },
  ): Promise<{ location: string; setCookie: string } | null>;
  /** Verifies the provider's answer (`callbackUrl` with its `code` and `state`) against this browser's flow. */
  finish(
    callbackUrl: URL,
    cookieHeader: string | null | undefined,
    signal?: AbortSignal,
  ): Promise<
    | {
        ok: true;
        account: Account;
        projectKey?: string;
        providerId: string;
        /** The projects the provider may sign people into (a tenant's provider, an organisation's connection); undefined: any. */
        projects: readonly string[] | undefined;
        idToken: string;
        /** When the person last authenticated at the provider (`auth_time`), epoch ms; null when it does not say. */
        authenticatedAt: number | null;
        /** The ID token's `sid` (the provider's session) and `jti` (the token's id), when it sent them. */
        tokenIds: { sid: string | null; jti: string | null };
      }
    | { ok: false; reason: SsoRefusal }
  >;
  /** The `Set-Cookie` that deletes the flow cookie. */
  readonly clearFlow: string;
  /**
   * The `Set-Cookie` of the sealed sign-out hint a single sign-on leaves (the provider, its ID token and
   * when the person authenticated, for that session), living as long as the session may (`maxAgeMs`);
   * without the ID token when it is too large for a cookie (then signing out is local), null when even
   * that does not fit.
   */
  sealSignOut(hint: Omit<SignOutHint, 'purpose'>, maxAgeMs: number): Promise<string | null>;
  /**
   * Where to send the browser to sign out at the provider (its `end_session_endpoint` with the ID token
   * as `id_token_hint`), from this browser's sign-out hint for this very session (its user and sign-in
   * time): null without a session, without a hint or with another session's, or for a provider with no
   * such endpoint.
   */
  endSessionUrl(
    cookieHeader: string | null | undefined,
    session: { userId: string; signedInAt: number } | null,
  ): Promise<string | null>;
  /** The `Set-Cookie` that deletes the sign-out hint. */
  readonly clearSignOut: string;
  /**
   * Where the person of this very session signed in (its provider), and when they last authenticated
   * there (the `auth_time` its single sign-on carried; null when the provider did not say, or for a
   * project outside that provider's tenant), from this browser's sign-out hint; null without one. What
   * a step-up of a user bound at a provider counts, not when the session began.
   */
  signedInAt(
    cookieHeader: string | null | undefined,
    session: { userId: string; signedInAt: number; projectKey: string },
  ): Promise<ProviderSignIn | null>;
}

import { createIdTokenVerifier, isUnverifiedToken } from './id-token-signature.js';

type OpenIdClient = typeof import('openid-client');
type CustomFetch = NonNullable<import('openid-client').DiscoveryRequestOptions[OpenIdClient['customFetch']]>;
// Loaded on first use: a session service without single sign-on never loads it.
let openIdClient: Promise<OpenIdClient> | undefined;
const loadOpenIdClient = () => (openIdClient ??= import('openid-client'));

/**
 * What a single sign-on leaves for signing out at the provider later: which provider, its ID token, and
 * the session it is for (the user, and when they signed in: kept through project switches).
 */
export interface SignOutHint {
  purpose: 'sign-out';
  provider: string;
  userId: string;
  signedInAt: number;
  idToken: string;
  /** The `auth_time` of the sign-in, epoch ms; null when the provider did not say (absent in older hints). */
  authenticatedAt?: number | null;
  /** The ID token's `sid` and `jti`, when the provider sent them: kept apart, they outlive an ID token too large to keep. */
  sid?: string | null;
  jti?: string | null;
}

const isSignOutHint = (value: Record<string, unknown>): value is Record<string, unknown> & SignOutHint =>
  value.purpose === 'sign-out' &&
  ['provider', 'userId', 'idToken'].every((key) => typeof value[key] === 'string') &&
  typeof value.signedInAt === 'number';

interface Flow {
  purpose: 'flow';
  provider: string;
  state: string;
  nonce: string;
  verifier: string;
  projectKey?: string;
  /** The person must authenticate at the provider now (`max_age=0`). */
  reauthenticate?: true;
}

const encoder = new TextEncoder();
const isFlow = (value: Record<string, unknown>): value is Record<string, unknown> & Flow =>
  value.purpose === 'flow' &&
  ['provider', 'state', 'nonce', 'verifier'].every((key) => typeof value[key] === 'string') &&
  (value.projectKey === undefined || typeof value.projectKey === 'string');

/** A provider's `name` claim as a name to store: text without control characters, at most 200; else undefined. */
function displayName(claim: unknown): string | undefined {
  if (typeof claim !== 'string') return undefined;
  const cleaned = claim
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, 200);
  const wellFormed = (cleaned as unknown as { isWellFormed(): boolean }).isWellFormed();
  return cleaned !== '' && wellFormed ? cleaned : undefined;
}

/**
 * Binds the person to the user, or finds them bound already (another tab's sign-in won the race);
 * false when either is bound to someone else at this provider.
 */
async function bind(
  links: IdentityLinkStore,
  person: { issuer: string; subject: string },
  userId: string,
  now: number,
): Promise<boolean> {
  if (await links.link({ ...person, userId, linkedAt: now })) return true;
  return (await links.find(person.issuer, person.subject)) === userId;
}

/** The account of a person the provider vouched for: existing, or provisioned when configured. */
async function accountFor(
  provider: SsoProvider,
  claims: Record<string, unknown>,
  directory: UserDirectory,
  provision: {
    addUser?: SingleSignOnOptions['addUser'];
    randomBytes: SessionContext['randomBytes'];
    /** Provisionings under way in this process, by email: a second tab waits for the first's. */
    inFlight: Map<string, Promise<Account | null>>;
    links: IdentityLinkStore;
    now: () => number;
  },
): Promise<{ ok: true; account: Account } | { ok: false; reason: SsoRefusal }> {
  for (const [claim, expected] of Object.entries(provider.requiredClaims ?? {})) {
    const allowed: readonly unknown[] = Array.isArray(expected) ? expected : [expected];
    if (!allowed.includes(claims[claim])) return { ok: false, reason: 'unknown_domain' };
  }
  if (typeof claims.email !== 'string') return { ok: false, reason: 'unverified_email' };
  const email = normalizeEmail(claims.email);
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (!provider.domains.some((allowed) => normalizeEmail(allowed) === domain))
    return { ok: false, reason: 'unknown_domain' };
  if (claims[provider.emailVerifiedClaim ?? 'email_verified'] !== true)
    return { ok: false, reason: 'unverified_email' };
  // The person, not the address, is who signs in: bound to a user on first sign-in, that user after.
  // Keyed by the ID token's `iss` (openid-client checked it is the provider's), not the configured spelling.
  const issuer = typeof claims.iss === 'string' ? claims.iss : new URL(provider.issuer).href;
  const person = { issuer, subject: claims.sub as string };
  const linked = await provision.links.find(person.issuer, person.subject);
  if (linked !== null) {
    let account = await directory.getAccount(linked);
    // A first sign-in of this person under way here (another tab) binds before it provisions: wait for
    // it, or its link would look like one to a user who is gone.
    const pending = provision.inFlight.get(email);
    if (!account && pending) account = (await pending.catch(() => null)) && (await directory.getAccount(linked));
    if (account) return { ok: true, account };
    // Bound to a user no longer there: the link goes, and the person is found by email as on a first sign-in.
    await provision.links.deleteByUser(linked);
  }
  const credentials = await directory.findCredentials(email);
  const existing = credentials && (await directory.getAccount(credentials.userId));
  // A tenant's provider binds no one it may not sign in: someone of no project of its tenant stays unbound.
  const tenant = provider.projects;
  // A role its groups give in one of the tenant's projects counts as one held (written at sign-in) —
  // for an account of this tenant alone: one that is a member elsewhere is never bound on a tenant's
  // say-so, or its provider would open another tenant's projects to it.
  const granted = provider.roles !== undefined && mappedRoles(provider.roles, claims).some((mapped) => mapped.role);
  if (existing && tenant) {
    const inTenant = existing.memberships.some((membership) => tenant.includes(membership.projectKey));
    const elsewhere = existing.memberships.some((membership) => !tenant.includes(membership.projectKey));
    if (!inTenant && !(granted && !elsewhere)) return { ok: false, reason: 'forbidden' };
  }
  if (existing) {
    // A user bound to another person at this provider: the address went to someone else.
    if (!(await bind(provision.links, person, existing.user.id, provision.now())))
      return { ok: false, reason: 'identity_conflict' };
    // The provider proved the address: what the directory knew or not, it is verified now.
    if (!existing.user.emailVerified) await directory.setEmailVerified(existing.user.id, email);
    return { ok: true, account: existing };
  }
  if (!provider.provisioning) return { ok: false, reason: 'no_account' };
  const byClaim = provider.provisioning.byClaim;
  const claimed = byClaim ? claims[byClaim.claim] : undefined;
  const values = Array.isArray(claimed) ? claimed : [claimed];
  // The claim's memberships first: where a project appears in both, the group's role is the one held.
  const memberships = [
    ...values.flatMap((value) =>
      byClaim && typeof value === 'string' && Object.hasOwn(byClaim.values, value) ? byClaim.values[value]! : [],
    ),
    ...provider.provisioning.memberships,
  ].filter(
    (membership, index, all) =>
      all.findIndex((other) => other.projectKey === membership.projectKey && other.clientId === membership.clientId) ===
      index,
  );
  if (tenant && memberships.length === 0) return { ok: false, reason: 'forbidden' };
  const name = displayName(claims.name) ?? email;
  // No password anyone knows: a hash of random bytes (the user signs in through the provider).
  const password = Array.from(provision.randomBytes(32), (byte) => byte.toString(16).padStart(2, '0')).join('');
  // One provisioning per email at a time here (`addUser` replaces by email): two tabs finishing a first
  // sign-in together get the same account.
  let adding = provision.inFlight.get(email);
  if (!adding) {
    // Bound first, under the id the user will have: a person who lost the race changes no account. In
    // flight from the start, so a second tab of the same person waits for this one.
    const id = crypto.randomUUID();
    adding = (async () => {
      if (!(await provision.links.link({ ...person, userId: id, linkedAt: provision.now() }))) return null;
      return provision.addUser!({
        id,
        email,
        name,
        passwordHash: await hashPassword(password),
        emailVerified: true,
        memberships: memberships.map((membership) => ({ ...membership })),
      });
    })().finally(() => provision.inFlight.delete(email));
    provision.inFlight.set(email, adding);
  }
  const account = await adding;
  // Provisioned by another tab of the same person: theirs; by anyone else, or not at all: a conflict.
  return account && (await provision.links.find(person.issuer, person.subject)) === account.user.id
    ? { ok: true, account }
    : { ok: false, reason: 'identity_conflict' };
}

/**
 * A cookie sealed for this service: a JWE (`dir`, A256GCM, jose loaded on first use) under the flow key,
 * so only this service reads or makes one, and it expires with its payload. One carries a sign-in's flow
 * from start to callback, another the hint for signing out at the provider.
 */
function createSealedCookie<Payload extends object>(
  name: string,
  attributes: { httpOnly: true; secure: boolean; sameSite: 'lax'; path: '/' },
  key: Promise<Uint8Array>,
  context: SessionContext,
  isPayload: (value: Record<string, unknown>) => value is Record<string, unknown> & Payload,
) {
  const occurrence = new RegExp(`(?:^|;)\\s*${name}\\s*=`, 'g');
  return {
    clear: stringifySetCookie({ name, value: '', maxAge: 0, ...attributes }),
    async seal(payload: Payload, ttlMs: number): Promise<string> {
      const { EncryptJWT } = await import('jose');
      const now = context.now();
      const sealed = await new EncryptJWT({ ...(payload as Record<string, unknown>) })
        .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
        .setIssuedAt(Math.floor(now / 1000))
        .setExpirationTime(Math.floor((now + ttlMs) / 1000))
        .encrypt(await key);
      return stringifySetCookie({ name, value: sealed, maxAge: Math.floor(ttlMs / 1000), ...attributes });
    },
    async read(cookieHeader: string | null | undefined): Promise<Payload | null> {
      // Two such cookies (one planted beside ours) are ambiguous: neither is used.
      if (!cookieHeader || (cookieHeader.match(occurrence)?.length ?? 0) !== 1) return null;
      const sealed = parseCookie(cookieHeader)[name];
      if (!sealed) return null;
      try {
        const { jwtDecrypt } = await import('jose');
        const { payload } = await jwtDecrypt(sealed, await key, { currentDate: new Date(context.now()) });
        return isPayload(payload) ? payload : null;
      } catch {
        return null;
      }
    },
  };
}

/**
 * Where the providers of a sign-in come from beside the configured ones: an organisation's own
 * connections (`@deskpilot/sso`'s connections), looked up when a sign-in needs one.
 */
export interface SsoProviderSource {
  /** The provider with this id, when it may sign anyone in now (an enabled connection), or undefined. */
  byId(id: string): Promise<SsoProvider | undefined>;
  /** The provider that is the authority for this lower-case email domain, or null. */
  byDomain(domain: string): Promise<SsoProvider | null>;
  /**
   * Brings an account's roles in step with a provider's `roles` and the ID token's claims, at a sign-in
   * through it: the account as it is then. Without it, a provider's `roles` are not applied.
   */
  applyRoles?(provider: SsoProvider, account: Account, claims: Record<string, unknown>): Promise<Account>;
}

/** The configured providers, then the source's: by id, and by an email's domain (home-realm discovery). */
function providerLookup(options: SingleSignOnOptions, source: SsoProviderSource | undefined) {
  const configured = new Map(options.providers.map((provider) => [provider.id, provider]));
  const byEmail = async (email: string): Promise<SsoProvider | null> => {
    const normalized = normalizeEmail(email);
    const domain = normalized.slice(normalized.lastIndexOf('@') + 1);
    const provider = options.providers.find((candidate) =>
      candidate.domains.some((allowed) => normalizeEmail(allowed) === domain),
    );
    return provider ?? (source ? await source.byDomain(domain) : null);
  };
  const lookupById = async (id: string): Promise<SsoProvider | undefined> =>
    configured.get(id) ?? (source && !configured.has(id) ? await source.byId(id) : undefined);
  return {
    byId: lookupById,
    byEmail,
    /** `byId`'s answer, or null when the lookup failed. */
    settled: (id: string) =>
      lookupById(id).then(
        (provider) => ({ provider }),
        () => null,
      ),
    /** Home-realm discovery: the id and name of the provider of an email's domain, or null. */
    async discover(email: string): Promise<{ id: string; name: string } | null> {
      const provider = await byEmail(email);
      return provider ? { id: provider.id, name: provider.name } : null;
    },
  };
}

/** The largest sign-out hint cookie set (name, value and attributes): below the 4,096 bytes browsers keep. */
const maxSignOutCookieBytes = 3_800;

/** The two cookies sealed under the flow key: a sign-in's flow, and the hint for signing out at the provider. */
function sealedCookies(
  options: SingleSignOnOptions,
  context: SessionContext,
  settings: { cookiePrefix: string; secure: boolean; pepper: string | undefined },
) {
  const keyMaterial = options.flowKey ?? settings.pepper;
  const key = (async () =>
    new Uint8Array(
      await crypto.subtle.digest(
        'SHA-256',
        keyMaterial ? encoder.encode(`deskpilot sso flow ${keyMaterial}`) : new Uint8Array(context.randomBytes(32)),
      ),
    ))();
  const attributes = { httpOnly: true, secure: settings.secure, sameSite: 'lax', path: '/' } as const;
  // `__Host-`: only this host, over https, with Path=/, may set them; no sibling subdomain or plain-http
  // page can plant a flow of its own (login CSRF).
  const prefix = `${settings.secure ? '__Host-' : ''}${settings.cookiePrefix}`;
  return {
    flowCookie: createSealedCookie(`${prefix}_sso`, attributes, key, context, isFlow),
    signOutCookie: createSealedCookie(`${prefix}_sso_out`, attributes, key, context, isSignOutHint),
  };
}

/**
 * The provider's end-session URL with the ID token as `id_token_hint` and the landing page to come back
 * to; null without a configuration or an `end_session_endpoint` (Google has none): signed out here only.
 */
async function endSessionUrlOf(
  configuration: Awaited<ReturnType<OpenIdClient['discovery']>> | null,
  idToken: string,
  options: SingleSignOnOptions,
): Promise<string | null> {
  if (!configuration) return null;
  const client = await loadOpenIdClient();
  try {
    return client.buildEndSessionUrl(configuration, {
      id_token_hint: idToken,
      post_logout_redirect_uri: options.postLogoutRedirectUri ?? options.landingUrl,
    }).href;
  } catch {
    return null;
  }
}

/**
 * Each provider's configuration, discovered once (again after a failure): its endpoints and keys. One
 * entry per provider, replaced when the provider changes (a connection's admins gave another issuer,
 * client or secret), so what is kept never grows with the edits.
 */
function createDiscovery(options: SingleSignOnOptions, context: SessionContext) {
  const configurations = new Map<
    string,
    { fingerprint: string; configuration: ReturnType<OpenIdClient['discovery']> }
  >();

  /** The provider's configuration, discovered once (again after a failure). */
  return async function configurationOf(provider: SsoProvider) {
    const client = await loadOpenIdClient();
    const fingerprint = createHash('sha256')
      .update(
        JSON.stringify([provider.issuer, provider.clientId, provider.clientSecret, provider.tokenEndpointAuthMethod]),
      )
      .digest('base64url');
    const kept = configurations.get(provider.id);
    let configuration = kept?.fingerprint === fingerprint ? kept.configuration : undefined;
    if (!configuration) {
      configuration = client.discovery(
        new URL(provider.issuer),
        provider.clientId,
        // The service's clock, so a test clock (or a skewed host) checks expiry as the service does.
        { client_secret: provider.clientSecret, [client.clockSkew]: Math.round((context.now() - Date.now()) / 1000) },
        provider.tokenEndpointAuthMethod === 'client_secret_basic'
          ? client.ClientSecretBasic(provider.clientSecret)
          : client.ClientSecretPost(provider.clientSecret),
        {
          timeout: (options.requestTimeoutMs ?? 3_000) / 1000,
          ...(options.allowInsecureRequests ? { execute: [client.allowInsecureRequests] } : {}),
          // openid-client calls it as fetch is called (its body type is narrower than fetch's own).
          ...(options.fetch ? { [client.customFetch]: options.fetch as unknown as CustomFetch } : {}),
        },
      );
      const entry = { fingerprint, configuration };
      configurations.set(provider.id, entry);
      configuration.catch(() => {
        if (configurations.get(provider.id) === entry) configurations.delete(provider.id);
      });
    }
    return configuration;
  };
}

/** Throws a TypeError naming the first provider configured wrong. */
function checkProviders(options: SingleSignOnOptions): void {
  for (const name of ['requestTimeoutMs', 'callbackTimeoutMs'] as const) {
    const value = options[name];
    if (value !== undefined && !(Number.isSafeInteger(value) && value > 0))
      throw new TypeError(`sso.${name} must be a positive whole number of milliseconds`);
  }
  for (const provider of options.providers) {
    const method = provider.tokenEndpointAuthMethod;
    if (method !== undefined && method !== 'client_secret_basic' && method !== 'client_secret_post')
      throw new TypeError(
        `sso provider ${provider.id}: tokenEndpointAuthMethod must be client_secret_basic or client_secret_post`,
      );
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(provider.id))
      throw new TypeError(`sso provider id ${JSON.stringify(provider.id)} is not URL-safe`);
    if (provider.id.startsWith('conn_'))
      throw new TypeError(`sso provider id ${provider.id}: conn_ names organisations' connections`);
    if (provider.provisioning && !options.addUser) throw new TypeError('sso provisioning needs sso.addUser');
    if (provider.projects) {
      const { memberships = [], byClaim } = provider.provisioning ?? {};
      const outside = [...memberships, ...Object.values(byClaim?.values ?? {}).flat()].find(
        (membership) => !provider.projects!.includes(membership.projectKey),
      );
      if (provider.projects.length === 0) throw new TypeError(`sso provider ${provider.id}: projects is empty`);
      if (outside)
        throw new TypeError(
          `sso provider ${provider.id}: provisioning names ${outside.projectKey}, which is not one of its projects`,
        );
    }
    if (new URL(provider.issuer).protocol !== 'https:' && !options.allowInsecureRequests)
      throw new TypeError(
        `sso provider ${provider.id}: the issuer must be https (allowInsecureRequests is for development)`,
      );
  }
}

/**
 * The provider's answer to a callback: the code exchanged (PKCE, state, nonce, and `max_age=0` for a
 * re-authentication checked by openid-client), the ID token's signature checked, and the claims — the
 * email and whether it is verified as a pair from one answer (UserInfo when the ID token has no email).
 */
async function exchangeCode(
  callbackUrl: URL,
  flow: Flow,
  provider: SsoProvider,
  {
    configuration,
    verifyIdToken,
  }: {
    configuration: Awaited<ReturnType<OpenIdClient['discovery']>>;
    verifyIdToken: ReturnType<typeof createIdTokenVerifier>;
  },
): Promise<{ claims: Record<string, unknown> | undefined; idToken: string; authTime: unknown; tokenIds: TokenIds }> {
  const client = await loadOpenIdClient();
  const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
    pkceCodeVerifier: flow.verifier,
    expectedState: flow.state,
    expectedNonce: flow.nonce,
    idTokenExpected: true,
    // A re-authentication asked for: the provider's auth_time must be now (its clock tolerance).
    ...(flow.reauthenticate ? { maxAge: 0 } : {}),
  });
  const idTokenClaims = tokens.claims();
  const idToken = tokens.id_token ?? '';
  // Its claims checked by openid-client; its signature against the keys the provider publishes too, so
  // a token is the provider's whatever the transport (and a rotated key is fetched at once).
  await verifyIdToken(idToken, configuration, provider.clientId);
  // When the person authenticated, and which session and token of the provider's: the ID token's word
  // alone (signed), never UserInfo's.
  const authTime = idTokenClaims?.auth_time;
  const tokenIds = { sid: tokenId(idTokenClaims?.sid), jti: tokenId(idTokenClaims?.jti) };
  if (!idTokenClaims || typeof idTokenClaims.email === 'string')
    return { claims: idTokenClaims, idToken, authTime, tokenIds };
  // A provider may keep the email out of the ID token (as the specification's default has it): then it
  // comes from the UserInfo endpoint, for the same subject.
  const userInfo = await client.fetchUserInfo(configuration, tokens.access_token, idTokenClaims.sub);
  const verified = provider.emailVerifiedClaim ?? 'email_verified';
  const { email: _email, [verified]: _verified, ...rest } = idTokenClaims;
  const { auth_time: _authTime, ...fromUserInfo } = userInfo;
  return {
    claims: { ...fromUserInfo, ...rest, email: userInfo.email, [verified]: userInfo[verified] },
    idToken,
    authTime,
    tokenIds,
  };
}

/** An ID token's `sid` and `jti`, each null when absent. */
type TokenIds = { sid: string | null; jti: string | null };

/** An id an ID token carries (`sid`, `jti`), as the trail keeps it: printable text of at most 255 characters, else null. */
function tokenId(value: unknown): string | null {
  return typeof value === 'string' && /^[\x21-\x7e]{1,255}$/.test(value) ? value : null;
}

/**
 * When the person authenticated at the provider (the ID token's `auth_time`, epoch ms), null when it
 * does not say; `future` beyond a minute of skew: a provider's mistake, or a lie.
 */
function authenticatedAtOf(authTime: unknown, now: number): number | null | 'future' {
  if (typeof authTime !== 'number' || !Number.isSafeInteger(authTime)) return null;
  return authTime * 1000 > now + 60_000 ? 'future' : authTime * 1000;
}

/** Whether a sign-in asked for a project outside the provider's tenant. */
const outsideTenant = (provider: SsoProvider, projectKey: string | undefined) =>
  provider.projects !== undefined && projectKey !== undefined && !provider.projects.includes(projectKey);

/**
 * The sign-out hint's methods: sealed after a single sign-on, read back only for the session it came
 * with (not after it ended, not for another user's or a later sign-in).
 */
function signOutHints(
  options: SingleSignOnOptions,
  signOutCookie: ReturnType<typeof sealedCookies>['signOutCookie'],
  providers: ReturnType<typeof providerLookup>,
  configurationOf: ReturnType<typeof createDiscovery>,
): Pick<SingleSignOn, 'clearSignOut' | 'sealSignOut' | 'endSessionUrl' | 'signedInAt'> {
  const hintOf = async (cookieHeader: string | null | undefined, session: { userId: string; signedInAt: number }) => {
    const hint = await signOutCookie.read(cookieHeader);
    return hint && hint.userId === session.userId && hint.signedInAt === session.signedInAt ? hint : null;
  };
  return {
    clearSignOut: signOutCookie.clear,
    async sealSignOut(hint, maxAgeMs) {
      // Browsers drop a cookie past 4 KB, and proxies may refuse the answer that sets it: without the ID
      // token then (signing out is local, and a step-up still knows when the person authenticated).
      for (const idToken of [hint.idToken, '']) {
        const setCookie = await signOutCookie.seal({ purpose: 'sign-out', ...hint, idToken }, maxAgeMs);
        if (setCookie.length <= maxSignOutCookieBytes) return setCookie;
      }
      return null;
    },

    async endSessionUrl(cookieHeader, session) {
      const hint = session && (await hintOf(cookieHeader, session));
      // Signing out never waits on a connection's store: a lookup that fails signs out here only.
      const provider = hint ? await providers.byId(hint.provider).catch(() => undefined) : undefined;
      if (!hint?.idToken || !provider) return null;
      return endSessionUrlOf(await configurationOf(provider).catch(() => null), hint.idToken, options);
    },

    async signedInAt(cookieHeader, session) {
      const hint = await hintOf(cookieHeader, session);
      const provider = hint ? await providers.byId(hint.provider) : undefined;
      if (!hint || !provider) return null;
      // A tenant's provider speaks for its projects only, not for a project switched to since.
      const authenticatedAt =
        typeof hint.authenticatedAt === 'number' && !outsideTenant(provider, session.projectKey)
          ? hint.authenticatedAt
          : null;
      return {
        provider: { id: provider.id, name: provider.name },
        authenticatedAt,
        sid: typeof hint.sid === 'string' ? hint.sid : null,
        jti: typeof hint.jti === 'string' ? hint.jti : null,
      };
    },
  };
}

/** The promise, or its rejection with the signal's reason once the signal aborts first. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/** Tests a provider now, as {@link SingleSignOn.checkProvider} says: every check runs, each says why. */
async function checkProvider(options: SingleSignOnOptions, provider: SsoProvider): Promise<ProviderCheck[]> {
  const client = await loadOpenIdClient();
  const timeout = options.requestTimeoutMs ?? 3_000;
  const reason = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 300);
  let metadata: ReturnType<Awaited<ReturnType<OpenIdClient['discovery']>>['serverMetadata']>;
  try {
    const configuration = await client.discovery(new URL(provider.issuer), provider.clientId, undefined, undefined, {
      timeout: timeout / 1000,
      ...(options.allowInsecureRequests ? { execute: [client.allowInsecureRequests] } : {}),
      ...(options.fetch ? { [client.customFetch]: options.fetch as unknown as CustomFetch } : {}),
    });
    metadata = configuration.serverMetadata();
  } catch (error) {
    return [{ check: 'discovery', ok: false, detail: `No discovery document at the issuer: ${reason(error)}` }];
  }
  const checks: ProviderCheck[] = [
    { check: 'discovery', ok: true, detail: `${metadata.issuer}: authorization and token endpoints found` },
  ];
  try {
    const keysUrl = new URL(String(metadata.jwks_uri));
    if (keysUrl.protocol !== 'https:' && !options.allowInsecureRequests) throw new Error('its jwks_uri is not https');
    const response = await (options.fetch ?? fetch)(keysUrl, {
      signal: AbortSignal.timeout(timeout),
      redirect: 'error',
    });
    const { keys } = (await response.json()) as { keys?: Array<{ kty?: string; use?: string }> };
    const signing = (keys ?? []).filter((key) => ['RSA', 'EC', 'OKP'].includes(key.kty ?? '') && key.use !== 'enc');
    checks.push(
      signing.length > 0
        ? { check: 'keys', ok: true, detail: `${signing.length} signing key(s) published` }
        : { check: 'keys', ok: false, detail: 'The key set publishes no signing key' },
    );
  } catch (error) {
    checks.push({ check: 'keys', ok: false, detail: `The key set cannot be read: ${reason(error)}` });
  }
  // Unlisted, the default of OpenID Connect Discovery is client_secret_basic.
  const accepted = metadata.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
  const method = provider.tokenEndpointAuthMethod ?? 'client_secret_post';
  checks.push(
    accepted.includes(method)
      ? { check: 'token_endpoint_auth', ok: true, detail: `The token endpoint accepts ${method}` }
      : {
          check: 'token_endpoint_auth',
          ok: false,
          detail: `The token endpoint accepts ${accepted.join(', ')}, not ${method}`,
        },
  );
  return checks;
}

/** What a first sign-in binds and provisions with (one provisioning per person at a time). */
function provisioning(options: SingleSignOnOptions, context: SessionContext) {
  return {
    addUser: options.addUser,
    randomBytes: context.randomBytes,
    inFlight: new Map<string, Promise<Account | null>>(),
    links: options.identityLinks,
    now: context.now,
  };
}

/** Creates the service's {@link SingleSignOn}. */
export function createSingleSignOn(
  options: SingleSignOnOptions,
  context: SessionContext,
  settings: { cookiePrefix: string; secure: boolean; pepper: string | undefined },
  source?: SsoProviderSource,
): SingleSignOn {
  const providers = providerLookup(options, source);
  checkProviders(options);
  const flowTtlMs = options.flowTtlMs ?? 10 * 60 * 1000;
  const { flowCookie, signOutCookie } = sealedCookies(options, context, settings);
  const configurationOf = createDiscovery(options, context);
  const verifyIdToken = createIdTokenVerifier({
    now: context.now,
    allowInsecureRequests: options.allowInsecureRequests === true,
    timeoutMs: options.requestTimeoutMs ?? 3_000,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const provision = provisioning(options, context);

  return {
    checkProvider: (provider) => checkProvider(options, provider),
    clearFlow: flowCookie.clear,
    ...signOutHints(options, signOutCookie, providers, configurationOf),

    providerFor: providers.discover,

    async start(providerId, projectKey, settings = {}) {
      const provider = await providers.byId(providerId);
      if (!provider) return null;
      const client = await loadOpenIdClient();
      const configuration = await configurationOf(provider);
      const flow: Flow = {
        purpose: 'flow',
        provider: provider.id,
        state: client.randomState(),
        nonce: client.randomNonce(),
        verifier: client.randomPKCECodeVerifier(),
        ...(projectKey === undefined ? {} : { projectKey }),
        ...(settings.reauthenticate ? { reauthenticate: true as const } : {}),
      };
      const location = client.buildAuthorizationUrl(configuration, {
        redirect_uri: options.redirectUri,
        scope: (provider.scopes ?? ['openid', 'email', 'profile']).join(' '),
        code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
        code_challenge_method: 'S256',
        state: flow.state,
        nonce: flow.nonce,
        ...(flow.reauthenticate ? { prompt: 'login', max_age: '0' } : {}),
      });
      return { location: location.href, setCookie: await flowCookie.seal(flow, flowTtlMs) };
    },

    async finish(callbackUrl, cookieHeader, signal) {
      const flow = await flowCookie.read(cookieHeader);
      // A lookup that fails (a connection's store down) is a refusal on the landing page, never a 5xx.
      const looked = flow ? await providers.settled(flow.provider) : { provider: undefined };
      if (!looked) return { ok: false, reason: 'provider_error' };
      const { provider } = looked;
      if (!flow || !provider || callbackUrl.searchParams.get('state') !== flow.state)
        return { ok: false, reason: 'invalid_flow' };
      if (outsideTenant(provider, flow.projectKey)) return { ok: false, reason: 'forbidden' };
      let claims: Record<string, unknown> | undefined;
      let idToken = '';
      let authTime: unknown;
      let tokenIds: TokenIds = { sid: null, jti: null };
      const deadline = AbortSignal.any([
        AbortSignal.timeout(options.callbackTimeoutMs ?? 8_000),
        ...(signal ? [signal] : []),
      ]);
      try {
        ({ claims, idToken, authTime, tokenIds } = await untilAborted(
          (async () =>
            exchangeCode(callbackUrl, flow, provider, {
              configuration: await configurationOf(provider),
              verifyIdToken,
            }))(),
          deadline,
        ));
      } catch (error) {
        return { ok: false, reason: isUnverifiedToken(error) ? 'invalid_token' : 'provider_error' };
      }
      const authenticatedAt = authenticatedAtOf(authTime, context.now());
      if (authenticatedAt === 'future') return { ok: false, reason: 'invalid_token' };
      // The subject identifies the person: at most 255 characters (OpenID Connect), text a store can hold.
      const subject = claims?.sub;
      if (!claims || typeof subject !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(subject))
        return { ok: false, reason: 'provider_error' };
      const outcome = await accountFor(provider, claims, context.directory, provision);
      if (!outcome.ok) return outcome;
      // The provider's groups decide the roles it maps, at every sign-in: a group left, a role gone.
      const account =
        provider.roles && source?.applyRoles
          ? await source.applyRoles(provider, outcome.account, claims)
          : outcome.account;
      return {
        ok: true,
        account,
        providerId: provider.id,
        projects: provider.projects,
        idToken,
        authenticatedAt,
        tokenIds,
        ...(flow.projectKey === undefined ? {} : { projectKey: flow.projectKey }),
      };
    },
  };
}

/**
 * The single sign-on module's API (`service.modules.sso`): the ceremonies, and the sign-in that ends
 * one through the kernel, as a password login does. It is also what step-up asks of it (`StepUpProvider`).
 */
export interface SessionSso extends SingleSignOn {
  /** Finishes a sign-in from the callback's query string (`?code=…&state=…`) and this browser's cookies. */
  signIn(
    search: string,
    cookieHeader: string | null | undefined,
    client?: SignInClient,
    signal?: AbortSignal,
  ): Promise<
    | (Extract<LoginResult, { ok: true }> & { setSignOutCookie: string | null; providerId: string })
    | { ok: false; reason: SsoRefusal }
  >;
  /** The landing page, with `#sso-error=<reason>` for a refusal. */
  landing(refusal?: SsoRefusal): string;
}
