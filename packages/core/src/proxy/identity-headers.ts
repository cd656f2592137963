import type { Session } from '../session/session.js';

/** Options naming the identity headers. */
export interface IdentityHeaderOptions {
  /** Headers are `x-<prefix>-user-email`, `-project-key`, `-client-id`, `-role`; the session cookie is `<prefix>_session`. @default "deskpilot" */
  prefix?: string;
  /**
   * Client headers never forwarded downstream besides the reserved `x-<prefix>-*` namespace: names, or
   * `prefix*` patterns, matched in any case and with `_` for `-`. Extend with
   * `[...defaultDeniedHeaders, 'x-my-user']`, or replace.
   * @default defaultDeniedHeaders
   */
  deniedHeaders?: readonly string[];
}

/**
 * Headers that carry an identity or a credential in common deployments: what auth proxies stamp on the
 * requests they forward (oauth2-proxy, Authelia, Pomerium, authentik, Vouch, Keycloak Gatekeeper,
 * Grafana's auth proxy, Kong, Tailscale Serve, Azure App Service, Google IAP, AWS ALB, Cloudflare
 * Access), client certificates a TLS terminator passes on, and `Authorization`. A browser has no reason
 * to send any of them, and a downstream that trusts one of them would take the client's word for who
 * is calling: the stamped `x-<prefix>-*` headers are the downstream call's only identity.
 */
export const defaultDeniedHeaders: readonly string[] = Object.freeze([
  'authorization',
  // oauth2-proxy (--pass-user-headers, --pass-access-token, --set-xauthrequest, GAP-*), nginx
  // auth_request and Traefik forwardAuth setups; x-auth-* also covers Keycloak Gatekeeper / Louketo.
  'x-forwarded-user',
  'x-forwarded-email',
  'x-forwarded-preferred-username',
  'x-forwarded-groups',
  'x-forwarded-access-token',
  'x-auth-*',
  'gap-auth',
  'gap-signature',
  'x-user',
  'x-user-id',
  'x-username',
  'x-email',
  // Authelia, Caddy/Traefik forward auth, CGI-style REMOTE_USER.
  'remote-user',
  'remote-groups',
  'remote-email',
  'remote-name',
  // Apache and Kubernetes front proxies.
  'x-remote-user',
  'x-remote-group',
  'x-remote-groups',
  'x-remote-extra-*',
  // Grafana auth proxy, Kong (plugins and kong-oidc), authentik, Vouch, Pomerium, Tailscale Serve.
  'x-webauth-*',
  'x-authenticated-*',
  'x-consumer-*',
  'x-credential-*',
  'x-anonymous-consumer',
  'x-userinfo',
  'x-id-token',
  'x-access-token',
  'x-authentik-*',
  'x-vouch-*',
  'x-pomerium-*',
  'tailscale-user-*',
  // Azure App Service, Google IAP, AWS ALB, Cloudflare Access.
  'x-ms-client-principal*',
  'x-ms-token-*',
  'x-goog-authenticated-user-*',
  'x-goog-iap-jwt-assertion',
  'x-amzn-oidc-*',
  'cf-access-*',
  // Client certificates: RFC 9440, Envoy/Istio, nginx/HAProxy conventions, Azure.
  'client-cert',
  'client-cert-chain',
  'x-forwarded-client-cert',
  'x-client-cert*',
  'x-ssl-client-*',
  'x-arr-clientcert',
]);

/** The four identity header names for a prefix. */
export function identityHeaderNames(options: IdentityHeaderOptions = {}) {
  const base = `x-${canonical(options.prefix ?? 'deskpilot')}-`;
  return {
    userEmail: `${base}user-email`,
    projectKey: `${base}project-key`,
    clientId: `${base}client-id`,
    role: `${base}role`,
  } as const;
}

/**
 * True for any spelling (any case, `_` for `-`) of a header in the identity namespace `x-<prefix>-*`
 * or on the deny list. The whole namespace is reserved, so a header added later can never be forged
 * by a client either.
 */
export function isIdentityHeader(name: string, options: IdentityHeaderOptions = {}): boolean {
  return identityHeaderTest(options)(name);
}

/** {@link isIdentityHeader} for one set of options; a malformed deny list throws here, before any header is seen. */
function identityHeaderTest(options: IdentityHeaderOptions): (name: string) => boolean {
  const denied = denyListOf(options.deniedHeaders ?? defaultDeniedHeaders);
  const namespace = `x-${canonical(options.prefix ?? 'deskpilot')}-`;
  return (name) => {
    const spelling = canonical(name);
    return spelling.startsWith(namespace) || denied(spelling);
  };
}

/** The identity headers to stamp on a downstream call, from the session service's answer. */
export function stampIdentityHeaders(session: Session, options: IdentityHeaderOptions = {}): Array<[string, string]> {
  const names = identityHeaderNames(options);
  return [
    [names.userEmail, session.user.email],
    [names.projectKey, session.projectKey],
    [names.clientId, session.clientId],
    [names.role, session.role],
  ];
}

// Many servers (CGI, WSGI, Rack, PHP, and nginx with underscores_in_headers) read `X_Forwarded_User` as
// `X-Forwarded-User`, so names are compared in one spelling: lower case, `_` as `-`.
function canonical(name: string): string {
  return name.trim().toLowerCase().replaceAll('_', '-');
}

const tokenCharacters = /^[a-z0-9!#$%&'+.^`|~-]+$/;
const compiledDenyLists = new WeakMap<readonly string[], (canonicalName: string) => boolean>();

/** The deny list as a predicate over canonical names, checked and built once per list. */
function denyListOf(entries: readonly string[]): (canonicalName: string) => boolean {
  const cached = compiledDenyLists.get(entries);
  if (cached) return cached;
  const names = new Set<string>();
  const prefixes: string[] = [];
  for (const entry of entries) {
    const spelling = canonical(entry);
    const wildcard = spelling.endsWith('*');
    const stem = wildcard ? spelling.slice(0, -1) : spelling;
    // A bare `*` would drop every header, including the ones the downstream needs: almost surely a slip.
    if (!tokenCharacters.test(stem))
      throw new TypeError(
        `Invalid denied header ${JSON.stringify(entry)}: a header name, or a name prefix followed by one *`,
      );
    if (wildcard) prefixes.push(stem);
    else names.add(stem);
  }
  const matches = (canonicalName: string) =>
    names.has(canonicalName) || prefixes.some((prefix) => canonicalName.startsWith(prefix));
  compiledDenyLists.set(entries, matches);
  return matches;
}

/**
 * The `Cookie` header without any `<name>=…` pair (every occurrence, whatever the whitespace around
 * the name), or undefined when nothing else is left. Pairs are cut at `;` and kept as sent, never
 * decoded and re-encoded; a header with nothing to remove is returned untouched.
 */
function withoutCookie(header: string | string[], name: string): string | string[] | undefined {
  const pairs = [header].flat().flatMap((value) => value.split(';'));
  const isNamed = (pair: string) => {
    const equals = pair.indexOf('=');
    return (equals === -1 ? pair : pair.slice(0, equals)).trim() === name;
  };
  if (!pairs.some(isNamed)) return header;
  const kept = pairs.map((pair) => pair.trim()).filter((pair) => pair !== '' && !isNamed(pair));
  // RFC 6265 §5.4 and RFC 9113 §8.2.3: one Cookie header, pairs joined by "; ".
  return kept.length === 0 ? undefined : kept.join('; ');
}

/** Incoming headers as Node gives them: lower-case names, repeated values possibly as arrays. */
export type IncomingHeaders = Record<string, string | string[] | undefined>;

// RFC 9110 §7.6.1: connection-specific headers are never forwarded by a proxy.
const hopByHop = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/**
 * The headers to send downstream: the client's headers without hop-by-hop headers, without any
 * spelling of the identity namespace or of the deny list, and without the session cookie (a bearer
 * token the downstream must never hold; the page's other cookies pass as sent), plus the identity
 * stamped from the session. Pure: adapters only copy the result onto the outgoing request.
 */
export function downstreamHeaders(
  incoming: IncomingHeaders,
  session: Session,
  options: IdentityHeaderOptions = {},
): Record<string, string | string[]> {
  const isIdentity = identityHeaderTest(options);
  const out = endToEndHeaders(incoming);
  for (const name of Object.keys(out)) if (isIdentity(name)) delete out[name];
  if (out.cookie !== undefined) {
    const cookie = withoutCookie(out.cookie, `${options.prefix ?? 'deskpilot'}_session`);
    if (cookie === undefined) delete out.cookie;
    else out.cookie = cookie;
  }
  for (const [name, value] of stampIdentityHeaders(session, options)) out[name] = value;
  return out;
}

/** Headers without the hop-by-hop ones (fixed list plus those named in `Connection`), names in lower case. */
export function endToEndHeaders(incoming: IncomingHeaders): Record<string, string | string[]> {
  const connectionListed = new Set(
    [incoming.connection ?? []]
      .flat()
      .flatMap((value) => value.split(','))
      .map((name) => name.trim().toLowerCase()),
  );
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    const lower = name.toLowerCase();
    if (value === undefined || hopByHop.has(lower) || connectionListed.has(lower)) continue;
    out[lower] = value;
  }
  return out;
}
