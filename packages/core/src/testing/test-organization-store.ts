import { describe, expect, it } from 'vitest';
import type { OrganizationStore } from '../team/organization-store.js';

/**
 * Conformance suite for an {@link OrganizationStore}: call it with a factory returning a fresh, empty
 * store. It checks projects by organisation (one organisation per project), admins by user, and that
 * input no row can hold is a miss, never a store error.
 *
 * @example
 * testOrganizationStore(() => createMemoryOrganizationStore());
 */
export function testOrganizationStore(make: () => OrganizationStore | Promise<OrganizationStore>): void {
  describe('OrganizationStore conformance', () => {
    it('groups projects under one organisation each, in key order', async () => {
      const store = await make();
      await store.addProject('acme', 'acme-b2c');
      await store.addProject('acme', 'acme-b2b');
      await store.addProject('globex', 'globex-b2c');
      expect(await store.projects('acme')).toEqual(['acme-b2b', 'acme-b2c']);
      expect(await store.organizationOf('acme-b2c')).toBe('acme');
      expect(await store.organizationOf('initech')).toBeNull();
      await store.addProject('globex', 'acme-b2b');
      expect(await store.projects('acme')).toEqual(['acme-b2c']);
      expect(await store.projects('globex')).toEqual(['acme-b2b', 'globex-b2c']);
      await store.addProject('globex', 'acme-b2b');
      expect(await store.projects('globex')).toEqual(['acme-b2b', 'globex-b2c']);
      expect(await store.projects('nobody')).toEqual([]);
    });

    it('makes and unmakes the admins of an organisation', async () => {
      const store = await make();
      await store.setAdmin('globex', 'user-1', true);
      await store.setAdmin('acme', 'user-1', true);
      await store.setAdmin('acme', 'user-1', true);
      await store.setAdmin('acme', 'user-2', true);
      expect(await store.administeredBy('user-1')).toEqual(['acme', 'globex']);
      await store.setAdmin('acme', 'user-1', false);
      await store.setAdmin('acme', 'user-3', false);
      expect(await store.administeredBy('user-1')).toEqual(['globex']);
      expect(await store.administeredBy('user-2')).toEqual(['acme']);
      expect(await store.administeredBy('user-3')).toEqual([]);
    });

    it('lists the admins of an organisation, and removes one only while another stays', async () => {
      const store = await make();
      await store.setAdmin('acme', 'user-2', true);
      await store.setAdmin('acme', 'user-1', true);
      await store.setAdmin('globex', 'user-3', true);
      expect(await store.admins('acme')).toEqual(['user-1', 'user-2']);
      expect(await store.admins('nobody')).toEqual([]);
      expect(await store.removeAdmin('acme', 'user-3')).toBe('not_admin');
      expect(await store.removeAdmin('acme', 'user-1')).toBe('removed');
      expect(await store.removeAdmin('acme', 'user-2')).toBe('last_admin');
      expect(await store.admins('acme')).toEqual(['user-2']);
    });

    it('keeps an admin when two remove each other at the same moment', async () => {
      const store = await make();
      await store.setAdmin('acme', 'user-1', true);
      await store.setAdmin('acme', 'user-2', true);
      const outcomes = await Promise.all([store.removeAdmin('acme', 'user-1'), store.removeAdmin('acme', 'user-2')]);
      expect(outcomes.sort()).toEqual(['last_admin', 'removed']);
      expect(await store.admins('acme')).toHaveLength(1);
    });

    it('answers input no row can hold (NUL, a lone surrogate) as a miss', async () => {
      const store = await make();
      for (const hostile of ['\u0000', 'acme\ud800']) {
        expect(await store.organizationOf(hostile)).toBeNull();
        expect(await store.projects(hostile)).toEqual([]);
        expect(await store.administeredBy(hostile)).toEqual([]);
        expect(await store.admins(hostile)).toEqual([]);
        expect(await store.removeAdmin(hostile, hostile)).toBe('not_admin');
      }
    });
  });
}
