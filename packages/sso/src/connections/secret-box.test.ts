import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMemorySsoConnectionStore, secretContext, type SsoConnectionRecord } from './sso-connection-store.js';
import { createSecretBox, resealConnectionSecrets } from './secret-box.js';

const newKey = () => randomBytes(32).toString('base64url');

describe('createSecretBox', () => {
  it('seals a secret so that the store never holds it, and opens it for the record it was sealed for', async () => {
    const box = createSecretBox({ keys: [{ id: 'k1', key: newKey() }] });
    const sealed = await box.seal('client-secret-ü-🔑', 'conn_1');
    expect(sealed).not.toContain('client-secret');
    expect(JSON.parse(sealed)).toMatchObject({
      protected: expect.any(String),
      iv: expect.any(String),
      tag: expect.any(String),
    });
    expect(await box.open(sealed, 'conn_1')).toBe('client-secret-ü-🔑');
    // The same secret sealed twice is two different texts (a fresh IV each time).
    expect(await box.seal('client-secret-ü-🔑', 'conn_1')).not.toBe(sealed);
  });

  it('refuses a secret moved to another record, changed, or not sealed by it', async () => {
    const box = createSecretBox({ keys: [{ id: 'k1', key: newKey() }] });
    const sealed = await box.seal('s3cret', 'conn_1');
    await expect(box.open(sealed, 'conn_2')).rejects.toThrow(/another record/);
    const jwe = JSON.parse(sealed) as Record<string, string>;
    const flipped = JSON.stringify({ ...jwe, ciphertext: `A${jwe.ciphertext!.slice(1)}` });
    await expect(box.open(flipped, 'conn_1')).rejects.toThrow(/does not open/);
    const otherBox = createSecretBox({ keys: [{ id: 'k1', key: newKey() }] });
    await expect(otherBox.open(sealed, 'conn_1')).rejects.toThrow(/does not open/);
    for (const garbage of ['', 'not json', '{}', '{"protected":"e30"}'])
      await expect(box.open(garbage, 'conn_1')).rejects.toThrow(/cannot be read|does not open|another record/);
    // What it throws never carries the secret.
    await box.open(sealed, 'conn_2').catch((error: Error) => expect(error.message).not.toContain('s3cret'));
  });

  it('rotates: a new first key seals, the old ones still open, and isCurrent names what to reseal', async () => {
    const [oldKey, nextKey] = [newKey(), newKey()];
    const before = createSecretBox({ keys: [{ id: '2026-10', key: oldKey }] });
    const sealed = await before.seal('s3cret', 'conn_1');
    const during = createSecretBox({
      keys: [
        { id: '2026-11', key: nextKey },
        { id: '2026-10', key: oldKey },
      ],
    });
    expect(during.isCurrent(sealed)).toBe(false);
    expect(await during.open(sealed, 'conn_1')).toBe('s3cret');
    const resealed = await during.seal(await during.open(sealed, 'conn_1'), 'conn_1');
    expect(during.isCurrent(resealed)).toBe(true);
    const after = createSecretBox({ keys: [{ id: '2026-11', key: nextKey }] });
    expect(await after.open(resealed, 'conn_1')).toBe('s3cret');
    await expect(after.open(sealed, 'conn_1')).rejects.toThrow(/key 2026-10, which the box no longer has/);
  });

  it('refuses keys that are not 32 bytes, ids that are not names, and no key at all', () => {
    expect(() => createSecretBox({ keys: [] })).toThrow(TypeError);
    expect(() => createSecretBox({ keys: [{ id: 'k1', key: randomBytes(16).toString('base64url') }] })).toThrow(
      /32 bytes/,
    );
    expect(() => createSecretBox({ keys: [{ id: 'k 1', key: newKey() }] })).toThrow(/key id/);
    expect(() =>
      createSecretBox({
        keys: [
          { id: 'k1', key: newKey() },
          { id: 'k1', key: newKey() },
        ],
      }),
    ).toThrow(/twice/);
    // base64 with padding, as `openssl rand -base64 32` prints it, is taken too.
    expect(() => createSecretBox({ keys: [{ id: 'k1', key: randomBytes(32).toString('base64') }] })).not.toThrow();
  });
});

describe('resealConnectionSecrets', () => {
  it('reseals every connection another key sealed, once, and leaves the rest as they are', async () => {
    const [oldKey, nextKey] = [newKey(), newKey()];
    const before = createSecretBox({ keys: [{ id: 'old', key: oldKey }] });
    const during = createSecretBox({
      keys: [
        { id: 'next', key: nextKey },
        { id: 'old', key: oldKey },
      ],
    });
    const store = createMemorySsoConnectionStore();
    const record = async (id: string, box: typeof before): Promise<SsoConnectionRecord> => ({
      id,
      organization: 'acme',
      name: id,
      issuer: 'https://idp.example.com',
      clientId: id,
      sealedClientSecret: await box.seal(`secret of ${id}`, secretContext({ id, issuer: 'https://idp.example.com' })),
      tokenEndpointAuthMethod: 'client_secret_post',
      domains: [`${id}.example.com`],
      settings: {},
      enabled: true,
      createdAt: 1,
      updatedAt: 1,
      version: 1,
    });
    await store.create(await record('conn_1', before));
    await store.create(await record('conn_2', during));
    expect(await resealConnectionSecrets(store, during, () => 5)).toEqual({ resealed: 1, skipped: 0 });
    const after = createSecretBox({ keys: [{ id: 'next', key: nextKey }] });
    for (const id of ['conn_1', 'conn_2'])
      expect(await after.open((await store.get(id))!.sealedClientSecret, secretContext((await store.get(id))!))).toBe(
        `secret of ${id}`,
      );
    expect(await store.get('conn_1')).toMatchObject({ version: 2, updatedAt: 5 });
    expect(await store.get('conn_2')).toMatchObject({ version: 1, updatedAt: 1 });
    expect(await resealConnectionSecrets(store, during)).toEqual({ resealed: 0, skipped: 0 });
  });
});
