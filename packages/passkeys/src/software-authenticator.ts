import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

/** What one ceremony's answer may get wrong on purpose. */
export interface CeremonyOverrides {
  origin?: string;
  rpId?: string;
  /** The authenticator checked who is there (a PIN, a fingerprint). @default true */
  userVerified?: boolean;
  /** Sign with another key than the credential's. */
  wrongKey?: boolean;
  /** Answer this challenge instead of the options'. */
  challenge?: string;
}

/** A software authenticator: see {@link createSoftwareAuthenticator}. */
export type SoftwareAuthenticator = ReturnType<typeof createSoftwareAuthenticator>;

/**
 * A software WebAuthn authenticator (ES256, `none` attestation, discoverable credentials) for Node
 * tests: the answers a browser sends after `navigator.credentials.create/get`, signed with real keys,
 * so the passkey routes can be tested without a browser. `counts: false` keeps the signature counter
 * at 0, as synced passkeys do. (In a browser test, use Chromium's virtual authenticator instead.)
 *
 * @example
 * const authenticator = createSoftwareAuthenticator({ origin: 'https://desk.example.com', rpId: 'desk.example.com' });
 * const passkeys = client.routes(passkeyRoutes); // @deskpilot/client, @deskpilot/passkeys/routes
 * const response = authenticator.register(await passkeys.passkeyRegistrationOptions({}));
 */
export function createSoftwareAuthenticator(options: { origin: string; rpId: string; counts?: boolean }) {
  const credentials = new Map<string, { privateKey: KeyObject; counter: number; userHandle: string }>();
  const counts = options.counts ?? true;

  function authenticatorData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }
  const flagsOf = (overrides: CeremonyOverrides, attested = false) =>
    0x01 | (overrides.userVerified === false ? 0 : 0x04) | (attested ? 0x40 : 0);
  const clientData = (type: string, challenge: string, overrides: CeremonyOverrides) =>
    Buffer.from(
      JSON.stringify({ type, challenge: overrides.challenge ?? challenge, origin: overrides.origin ?? options.origin }),
    );

  return {
    /** The ids of the credentials it holds. */
    get ids() {
      return [...credentials.keys()];
    },

    /** Creates a credential for the options, and the answer a browser sends. */
    register(
      creation: PublicKeyCredentialCreationOptionsJSON,
      overrides: CeremonyOverrides = {},
    ): RegistrationResponseJSON {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const jwk = publicKey.export({ format: 'jwk' });
      const id = randomBytes(16);
      const cose = isoCBOR.encode(
        new Map<number, number | Uint8Array>([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, Buffer.from(jwk.x!, 'base64url')],
          [-3, Buffer.from(jwk.y!, 'base64url')],
        ]),
      );
      const idLength = Buffer.alloc(2);
      idLength.writeUInt16BE(id.length);
      const attested = Buffer.concat([Buffer.alloc(16), idLength, id, Buffer.from(cose)]);
      const counter = counts ? 1 : 0;
      credentials.set(b64(id), { privateKey, counter, userHandle: creation.user.id });
      const authData = authenticatorData(overrides.rpId ?? options.rpId, flagsOf(overrides, true), counter, attested);
      const attestationObject = isoCBOR.encode(
        new Map<string, unknown>([
          ['fmt', 'none'],
          ['attStmt', new Map()],
          ['authData', authData],
        ]) as never,
      );
      return {
        id: b64(id),
        rawId: b64(id),
        type: 'public-key',
        response: {
          clientDataJSON: b64(clientData('webauthn.create', creation.challenge, overrides)),
          attestationObject: b64(attestationObject),
          transports: ['internal'],
        },
        clientExtensionResults: {},
      };
    },

    /** Signs the options' challenge with a credential (the first by default), as `navigator.credentials.get` answers. */
    authenticate(
      request: PublicKeyCredentialRequestOptionsJSON,
      overrides: CeremonyOverrides & { id?: string } = {},
    ): AuthenticationResponseJSON {
      const id = overrides.id ?? [...credentials.keys()][0]!;
      const credential = credentials.get(id)!;
      if (counts) credential.counter++;
      const authData = authenticatorData(overrides.rpId ?? options.rpId, flagsOf(overrides), credential.counter);
      const data = clientData('webauthn.get', request.challenge, overrides);
      const key = overrides.wrongKey
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
        : credential.privateKey;
      const signature = sign('sha256', Buffer.concat([authData, sha256(data)]), { key, dsaEncoding: 'der' });
      return {
        id,
        rawId: id,
        type: 'public-key',
        response: {
          clientDataJSON: b64(data),
          authenticatorData: b64(authData),
          signature: b64(signature),
          userHandle: credential.userHandle,
        },
        clientExtensionResults: {},
      };
    },
  };
}
