import type { Configuration } from 'openid-client';

type RemoteKeys = ReturnType<typeof import('jose').createRemoteJWKSet>;

/** Options of {@link createIdTokenVerifier}. */
export interface IdTokenVerifierOptions {
  /** The service's clock: expiry is checked as the service sees time. */
  now: () => number;
  /** How the provider's key set is fetched (a proxy, tests). @default fetch */
  fetch?: typeof fetch;
  /** A key set fetch gives up after this long. @default 5_000 */
  timeoutMs?: number;
  /** Development only: a key set on plain http. @default false */
  allowInsecureRequests?: boolean;
}

/**
 * Checks an ID token's signature against the keys its provider publishes (`jwks_uri`), with its issuer,
 * audience and expiry, on jose. The key set is fetched once and kept; a token signed with a key it does
 * not list (an unannounced rotation) fetches it again at once — a token reaches this check only from
 * the provider's token endpoint (a configured provider's, or the connection an organisation's admin
 * gave: see the single sign-on module's `fetch` for an egress policy). Only asymmetric keys (RS, PS, ES,
 * EdDSA): the client secret is never a signing key here.
 */
export function createIdTokenVerifier(options: IdTokenVerifierOptions) {
  const keySets = new Map<string, Promise<RemoteKeys>>();
  const keysOf = (jwksUri: string) => {
    let keys = keySets.get(jwksUri);
    if (!keys) {
      keys = import('jose').then(({ createRemoteJWKSet, customFetch }) =>
        createRemoteJWKSet(new URL(jwksUri), {
          cooldownDuration: 0,
          timeoutDuration: options.timeoutMs ?? 5_000,
          ...(options.fetch ? { [customFetch]: options.fetch } : {}),
        }),
      );
      keySets.set(jwksUri, keys);
    }
    return keys;
  };
  return async (idToken: string, configuration: Configuration, clientId: string): Promise<void> => {
    const { jwtVerify } = await import('jose');
    const metadata = configuration.serverMetadata();
    if (!metadata.jwks_uri) throw new TypeError(`The provider ${metadata.issuer} publishes no jwks_uri`);
    // Keys from anywhere but TLS could be anyone's: refused (a provider_error), as openid-client does.
    if (new URL(metadata.jwks_uri).protocol !== 'https:' && !options.allowInsecureRequests)
      throw new TypeError(`The provider ${metadata.issuer} publishes its keys on plain http`);
    await jwtVerify(idToken, await keysOf(metadata.jwks_uri), {
      issuer: metadata.issuer,
      audience: clientId,
      algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'],
      currentDate: new Date(options.now()),
      // As openid-client's own check of the same claims.
      clockTolerance: 30,
    });
  };
}

/**
 * Whether an error of a code exchange means the provider's answer does not verify (a signature, an
 * audience, a nonce, an issuer, an expiry: `invalid_token`) rather than the provider refusing or not
 * answering (`provider_error`).
 */
export function isUnverifiedToken(error: unknown): boolean {
  const codes = [error, (error as { cause?: unknown } | null)?.cause].map(
    (candidate) => (candidate as { code?: unknown } | null)?.code,
  );
  return codes.some(
    (code) =>
      typeof code === 'string' &&
      (code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' ||
        code === 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED' ||
        code.startsWith('ERR_JWS_') ||
        code.startsWith('ERR_JWT_') ||
        code === 'ERR_JWKS_NO_MATCHING_KEY' ||
        code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS'),
  );
}
