import { describe, expect, it } from 'vitest';
import type { Configuration } from 'openid-client';
import { createIdTokenVerifier, isUnverifiedToken } from './id-token-signature.js';

/** A provider's configuration as far as the verifier reads it. */
const configurationWith = (jwksUri: string | undefined) =>
  ({ serverMetadata: () => ({ issuer: 'https://id.example', jwks_uri: jwksUri }) }) as unknown as Configuration;

describe('createIdTokenVerifier', () => {
  it('takes keys over https only, unless insecure requests are allowed (development), and needs a jwks_uri', async () => {
    const fetched: string[] = [];
    const fetch = (async (input: RequestInfo | URL) => {
      fetched.push(String(input));
      return Response.json({ keys: [] });
    }) as typeof globalThis.fetch;
    const strict = createIdTokenVerifier({ now: Date.now, fetch });
    const token = 'eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.e30.c2ln';
    await expect(strict(token, configurationWith('http://id.example/jwks'), 'desk')).rejects.toThrow(/plain http/);
    await expect(strict(token, configurationWith(undefined), 'desk')).rejects.toThrow(/no jwks_uri/);
    expect(fetched).toEqual([]);
    const lax = createIdTokenVerifier({ now: Date.now, fetch, allowInsecureRequests: true });
    const refused = await lax(token, configurationWith('http://id.example/jwks'), 'desk').catch((error) => error);
    // Fetched (again at once for the key it does not list), then refused: a token that does not verify.
    expect(new Set(fetched)).toEqual(new Set(['http://id.example/jwks']));
    expect(isUnverifiedToken(refused)).toBe(true);
  });
});
