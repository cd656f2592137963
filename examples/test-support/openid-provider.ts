import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';

/** The people the test provider can sign in (`sub` → claims). */
export const testPeople: Record<string, Record<string, unknown>> = {
  ana: { email: 'ana@acme.example', email_verified: true, name: 'Ana Acme', groups: ['desk-admins'] },
  alice: { email: 'alice@example.com', email_verified: true, name: 'Alice' },
  bob: { email: 'bob@example.com', email_verified: true, name: 'Bob' },
  rep: { email: 'rep@example.com', email_verified: true, name: 'Rep' },
  outsider: { email: 'eve@elsewhere.example', email_verified: true, name: 'Eve' },
  unverified: { email: 'uma@acme.example', email_verified: false, name: 'Uma' },
  /** As Entra ID sends it: an email, no `email_verified`, and `xms_edov` (the domain is the tenant's, verified). */
  assigned: { email: 'alice@example.com', name: 'Alice (assigned address)', xms_edov: true },
  /** As Google sends it for a Workspace account: `hd`, the Workspace domain. */
  workspace: { email: 'alice@example.com', email_verified: true, name: 'Alice', hd: 'example.com' },
  /** A name no text column may hold. */
  mallory: { email: 'mallory@acme.example', email_verified: true, name: 'Mallory\u0000\u0007 Malicious' },
};

/** A registered client of the test provider. */
export interface TestClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  /** Where the provider may send the browser after signing out there (RP-initiated logout). */
  postLogoutRedirectUris?: string[];
  /** How the client authenticates at the token endpoint, as registered. @default 'client_secret_basic' */
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post';
}

/**
 * A real, certified OpenID Provider (`oidc-provider`) on a free loopback port, with one interaction
 * step that signs in (and consents for) whichever person `signIn(sub)` named last. Everything else is
 * the provider's own: discovery, keys, PKCE, codes used once, signed ID tokens, UserInfo.
 */
export async function startOpenIdProvider(clients: TestClient[]) {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let signingIn = 'alice';
  let rotations = 0;
  /** The key it signs with now: its own, so a test can sign what only the provider could. */
  let signing = await newSigningKey('key-0');
  const make = (jwks?: { keys: JWK[] }) =>
    new Provider(issuer, {
      ...(jwks ? { jwks } : {}),
      clients: clients.map((client) => ({
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uris: client.redirectUris,
        post_logout_redirect_uris: client.postLogoutRedirectUris ?? [],
        ...(client.tokenEndpointAuthMethod ? { token_endpoint_auth_method: client.tokenEndpointAuthMethod } : {}),
        // When the person authenticated, in every ID token (as Okta, Entra ID and Keycloak send it).
        require_auth_time: true,
      })),
      claims: { openid: ['sub'], email: ['email', 'email_verified', 'xms_edov', 'hd'], profile: ['name', 'groups'] },
      findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, ...testPeople[sub] }) }),
      pkce: { required: () => true },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      cookies: { keys: ['a-cookie-key-for-the-test-provider'] },
    });
  let provider = make({ keys: [signing.jwk] });
  let callback = provider.callback();
  server.on('request', async (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return callback(req, res);
    // The person "signs in" at the provider and consents, in one step.
    const details = await provider.interactionDetails(req, res);
    const grant = new provider.Grant({ accountId: signingIn, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId: signingIn }, consent: { grantId } });
  });
  return {
    issuer,
    /** Who signs in at the next interaction. */
    signIn(sub: string) {
      signingIn = sub;
    },
    /**
     * Rotates the signing key at once, as a provider that does not publish its next key ahead would: a
     * new RS256 key signs, and it is the only one the key set lists. The provider keeps its issuer and
     * port; what was under way there (codes, sessions) is gone.
     */
    async rotateKeys() {
      signing = await newSigningKey(`key-${++rotations}`);
      provider = make({ keys: [signing.jwk] });
      callback = provider.callback();
    },
    /** Signs claims as an ID token with the provider's current key (or `key`, one it does not publish). */
    signIdToken: (claims: JWTPayload, key = signing) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key.jwk.kid!, typ: 'JWT' }).sign(key.privateKey),
    /** A signing key of the provider's kind that it does not publish. */
    foreignKey: () => newSigningKey(signing.jwk.kid!),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An RS256 signing key with its private JWK (what the provider publishes the public half of). */
async function newSigningKey(kid: string) {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { privateKey, jwk: { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' } as JWK };
}

/**
 * Follows a browser's redirects from `location` (a provider's authorization URL) through the provider's
 * sign-in, keeping its cookies, until it is sent to `redirectUri`: the callback URL, with its query.
 */
export async function followToCallback(location: string, redirectUri: string): Promise<URL> {
  const jar = new Map<string, string>();
  let url = new URL(location);
  for (let hop = 0; hop < 10; hop++) {
    if (url.href.startsWith(redirectUri)) return url;
    const response = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const [name, ...value] = pair!.split('=');
      jar.set(name!, value.join('='));
    }
    const next = response.headers.get('location');
    if (!next) throw new Error(`the provider answered ${response.status} at ${url.pathname}`);
    url = new URL(next, url);
  }
  throw new Error('too many redirects at the provider');
}
