import { FlattenedEncrypt, flattenedDecrypt, type FlattenedJWE } from 'jose';
import { secretContext, type SsoConnectionStore } from './sso-connection-store.js';

/** A key of a {@link SecretBox}: its name, and 32 random bytes as base64url (`openssl rand -base64 32`, made URL-safe, or `base64url` of `randomBytes(32)`). */
export interface SecretBoxKey {
  /** Names the key in every secret it seals, so that a rotation knows which one opens it. */
  id: string;
  /** 32 bytes, base64url (or base64). */
  key: string;
}

/**
 * Seals secrets for storage (an organisation's client secret) and opens them again: AES-256-GCM, as
 * JWE (`dir`, `A256GCM`, RFC 7516) on `jose`, with the key's id in the protected header and what the
 * secret belongs to (a connection's id) as additional authenticated data, so a sealed secret copied to
 * another record opens nowhere.
 */
export interface SecretBox {
  /** Seals `secret` for `context` (the record it is stored in) with the first key. */
  seal(secret: string, context: string): Promise<string>;
  /** Opens what `seal` made for `context`; throws when it was changed, made for another context, or sealed with a key the box no longer has. */
  open(sealed: string, context: string): Promise<string>;
  /** Whether `sealed` is sealed with the first key: a rotation reseals what is not. */
  isCurrent(sealed: string): boolean;
}

const keyPattern = /^[A-Za-z0-9_+/-]{43}=?$/;
const keyIdPattern = /^[A-Za-z0-9._-]{1,64}$/;
const utf8 = new TextEncoder();

/**
 * Creates a {@link SecretBox} over the operator's keys, the first one sealing and every one opening.
 * To rotate: put a new key first and keep the old ones, reseal what `isCurrent` says is not (the
 * {@link resealConnectionSecrets}), then drop the old keys.
 *
 * @example
 * const box = createSecretBox({ keys: [{ id: '2026-11', key: process.env.SSO_SECRET_KEY! }] });
 */
export function createSecretBox(options: { keys: readonly SecretBoxKey[] }): SecretBox {
  if (options.keys.length === 0) throw new TypeError('createSecretBox: give at least one key');
  const keys = new Map<string, Uint8Array>();
  for (const { id, key } of options.keys) {
    if (!keyIdPattern.test(id))
      throw new TypeError('createSecretBox: a key id is 1-64 letters, digits, dots, dashes or underscores');
    if (keys.has(id)) throw new TypeError(`createSecretBox: the key id ${id} is given twice`);
    if (!keyPattern.test(key)) throw new TypeError(`createSecretBox: the key ${id} is not 32 bytes as base64url`);
    keys.set(id, Uint8Array.from(Buffer.from(key.replaceAll('+', '-').replaceAll('/', '_'), 'base64url')));
  }
  const [current] = options.keys;
  const parse = (sealed: string): { jwe: FlattenedJWE; kid: string } => {
    const jwe = JSON.parse(sealed) as FlattenedJWE;
    const header = JSON.parse(Buffer.from(jwe.protected ?? '', 'base64url').toString('utf8')) as { kid?: unknown };
    if (typeof header.kid !== 'string') throw new TypeError('not a sealed secret');
    return { jwe, kid: header.kid };
  };
  return {
    async seal(secret, context) {
      const jwe = await new FlattenedEncrypt(utf8.encode(secret))
        .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: current!.id })
        .setAdditionalAuthenticatedData(utf8.encode(context))
        .encrypt(keys.get(current!.id)!);
      return JSON.stringify(jwe);
    },
    async open(sealed, context) {
      let parsed: { jwe: FlattenedJWE; kid: string };
      try {
        parsed = parse(sealed);
      } catch {
        throw new Error('The sealed secret cannot be read: it is not one this box made.');
      }
      const key = keys.get(parsed.kid);
      if (!key) throw new Error(`The secret is sealed with the key ${parsed.kid}, which the box no longer has.`);
      if (parsed.jwe.aad !== Buffer.from(context, 'utf8').toString('base64url'))
        throw new Error('The sealed secret belongs to another record.');
      try {
        const { plaintext } = await flattenedDecrypt(parsed.jwe, key, {
          keyManagementAlgorithms: ['dir'],
          contentEncryptionAlgorithms: ['A256GCM'],
        });
        return new TextDecoder().decode(plaintext);
      } catch {
        throw new Error('The sealed secret does not open: it was changed, or sealed with another key of that name.');
      }
    },
    isCurrent(sealed) {
      try {
        return parse(sealed).kid === current!.id;
      } catch {
        return false;
      }
    },
  };
}

/**
 * The rotation's second step: reseals with the box's first key every connection's client secret that
 * another key sealed, one replacement each (a connection changed meanwhile is skipped: run it again).
 * Throws, changing nothing more, when a secret does not open (a key dropped too early).
 *
 * @example
 * const box = createSecretBox({ keys: [{ id: '2026-12', key: next }, { id: '2026-11', key: previous }] });
 * await resealConnectionSecrets(connections, box); // then drop '2026-11'
 */
export async function resealConnectionSecrets(
  store: SsoConnectionStore,
  box: SecretBox,
  now: () => number = Date.now,
): Promise<{ resealed: number; skipped: number }> {
  let resealed = 0;
  let skipped = 0;
  for (const record of await store.list()) {
    if (box.isCurrent(record.sealedClientSecret)) continue;
    const context = secretContext(record);
    const sealedClientSecret = await box.seal(await box.open(record.sealedClientSecret, context), context);
    const outcome = await store.replace({
      ...record,
      sealedClientSecret,
      updatedAt: now(),
      version: record.version + 1,
    });
    if (outcome === 'replaced') resealed++;
    else skipped++;
  }
  return { resealed, skipped };
}
