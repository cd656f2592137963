import { describe, expect, it } from 'vitest';
import type { SsoConnectionRecord, SsoConnectionStore } from './sso-connection-store.js';

const connection = (overrides: Partial<SsoConnectionRecord> = {}): SsoConnectionRecord => ({
  id: 'conn_1',
  organization: 'acme',
  name: 'Acme Okta',
  issuer: 'https://acme.okta.example.com',
  clientId: 'client-1',
  sealedClientSecret: '{"protected":"…","ciphertext":"…"}',
  tokenEndpointAuthMethod: 'client_secret_post',
  domains: ['acme.example.com', 'acme.test'],
  settings: {
    scopes: ['email', 'profile', 'groups'],
    requiredClaims: { tid: 'tenant-1', amr: ['mfa'], email_verified: true },
    emailVerifiedClaim: 'xms_edov',
  },
  enabled: true,
  createdAt: 1_000,
  updatedAt: 1_000,
  version: 1,
  ...overrides,
});

/**
 * Conformance suite for an {@link SsoConnectionStore}: call it inside a test file with a factory
 * returning a fresh, empty store. It checks records field for field, each domain kept to one
 * connection (also under concurrency), replacement from the version read only (of concurrent
 * replacements one wins), the lookups, deletion, and that hostile input is a miss.
 *
 * @example
 * testSsoConnectionStore(() => createMemorySsoConnectionStore());
 */
export function testSsoConnectionStore(make: () => SsoConnectionStore | Promise<SsoConnectionStore>): void {
  describe('SsoConnectionStore conformance', () => {
    it('keeps a connection field for field, and refuses a second one with its id', async () => {
      const store = await make();
      expect(await store.create(connection({ domains: ['b.example.com', 'a.example.com'] }))).toBe('created');
      expect(await store.get('conn_1')).toEqual(connection({ domains: ['a.example.com', 'b.example.com'] }));
      expect(await store.create(connection({ name: 'Other', domains: ['c.example.com'] }))).toBe('exists');
      expect((await store.get('conn_1'))!.name).toBe('Acme Okta');
      expect(await store.get('conn_2')).toBeNull();
      // A new connection is at version 1, whatever it was given.
      expect(await store.create(connection({ id: 'conn_3', domains: ['c.example.com'], version: 7 }))).toBe('created');
      expect((await store.get('conn_3'))!.version).toBe(1);
      // What it answers is a copy: changing it changes nothing stored.
      const read = (await store.get('conn_1'))!;
      read.domains.push('mutated.example.com');
      read.settings.scopes!.push('mutated');
      expect(await store.get('conn_1')).toEqual(connection({ domains: ['a.example.com', 'b.example.com'] }));
    });

    it('lists an organisation’s connections and every connection, oldest first', async () => {
      const store = await make();
      await store.create(connection({ id: 'conn_b', domains: ['b.example.com'] }));
      await store.create(connection({ id: 'conn_a', domains: ['a.example.com'] }));
      await store.create(connection({ id: 'conn_g', organization: 'globex', domains: ['globex.example.com'] }));
      expect((await store.listByOrganization('acme')).map((record) => record.id)).toEqual(['conn_b', 'conn_a']);
      expect((await store.listByOrganization('globex')).map((record) => record.id)).toEqual(['conn_g']);
      expect(await store.listByOrganization('initech')).toEqual([]);
      expect((await store.list()).map((record) => record.id)).toEqual(['conn_b', 'conn_a', 'conn_g']);
    });

    it('keeps each domain to one connection, across organisations, and finds an enabled one by its domain', async () => {
      const store = await make();
      await store.create(connection());
      expect(await store.create(connection({ id: 'conn_2', organization: 'evil', domains: ['acme.test'] }))).toBe(
        'domain_taken',
      );
      expect(await store.get('conn_2')).toBeNull();
      expect((await store.findByDomain('acme.test'))!.id).toBe('conn_1');
      expect(await store.findByDomain('evil.test')).toBeNull();
      // Disabled: found by no domain, and its domains still its own.
      expect(await store.replace(connection({ enabled: false, version: 2 }))).toBe('replaced');
      expect(await store.findByDomain('acme.test')).toBeNull();
      expect(await store.create(connection({ id: 'conn_2', domains: ['acme.test'] }))).toBe('domain_taken');
      // Deleted: its domains are free again.
      expect(await store.delete('conn_1')).toBe(true);
      expect(await store.delete('conn_1')).toBe(false);
      expect(await store.create(connection({ id: 'conn_2', domains: ['acme.test'] }))).toBe('created');
      expect((await store.findByDomain('acme.test'))!.id).toBe('conn_2');
      expect(await store.findByDomain('acme.example.com')).toBeNull();
    });

    it('gives one of two connections created at once with one domain the domain, and nothing of the other', async () => {
      const store = await make();
      const results = await Promise.all(
        ['conn_1', 'conn_2', 'conn_3'].map((id) =>
          store.create(connection({ id, domains: [`${id}.example.com`, 'shared.example.com'] })),
        ),
      );
      expect(results.filter((result) => result === 'created')).toHaveLength(1);
      expect(results.filter((result) => result === 'domain_taken')).toHaveLength(2);
      const winner = ['conn_1', 'conn_2', 'conn_3'][results.indexOf('created')]!;
      expect((await store.findByDomain('shared.example.com'))!.id).toBe(winner);
      expect((await store.list()).map((record) => record.id)).toEqual([winner]);
    });

    it('replaces only from the version read: a stale write, an unknown id and a taken domain change nothing', async () => {
      const store = await make();
      await store.create(connection());
      await store.create(connection({ id: 'conn_2', domains: ['other.example.com'] }));
      const next = connection({
        name: 'Renamed',
        domains: ['acme.test', 'new.example.com'],
        updatedAt: 2_000,
        version: 2,
      });
      expect(await store.replace(next)).toBe('replaced');
      expect(await store.get('conn_1')).toEqual(next);
      expect((await store.findByDomain('new.example.com'))!.id).toBe('conn_1');
      expect(await store.findByDomain('acme.example.com')).toBeNull();
      expect(await store.replace(connection({ name: 'Stale', version: 2 }))).toBe('conflict');
      expect(await store.replace(connection({ id: 'conn_9', version: 2 }))).toBe('not_found');
      expect(await store.replace(connection({ domains: ['other.example.com'], version: 3 }))).toBe('domain_taken');
      expect(await store.get('conn_1')).toEqual(next);
      expect((await store.findByDomain('other.example.com'))!.id).toBe('conn_2');
    });

    it('lets one of two replacements from the same version win', async () => {
      const store = await make();
      await store.create(connection());
      const results = await Promise.all(
        ['First', 'Second', 'Third'].map((name) => store.replace(connection({ name, version: 2 }))),
      );
      expect(results.filter((result) => result === 'replaced')).toHaveLength(1);
      expect(results.filter((result) => result === 'conflict')).toHaveLength(2);
      expect((await store.get('conn_1'))!.version).toBe(2);
    });

    it('answers hostile keys as misses', async () => {
      const store = await make();
      await store.create(connection());
      for (const key of ['', '\u0000', '\uD800', 'conn_1\u0000', "conn_1' OR '1'='1", 'x'.repeat(10_000)]) {
        expect(await store.get(key)).toBeNull();
        expect(await store.findByDomain(key)).toBeNull();
        expect(await store.listByOrganization(key)).toEqual([]);
        expect(await store.delete(key)).toBe(false);
      }
      expect((await store.list()).map((record) => record.id)).toEqual(['conn_1']);
    });
  });
}
