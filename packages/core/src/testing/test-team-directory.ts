import { describe, expect, it } from 'vitest';
import type { AuditEvent, AuditStore } from '../audit/audit-store.js';
import type { Membership } from '../session/user-directory.js';
import type { TeamDirectory } from '../session/team-directory.js';
import type { UserDirectoryUnderTest } from './test-user-directory.js';

/** What {@link testTeamDirectory} runs against: the directory, and the audit trail in its database when it has one. */
export interface TeamDirectoryUnderTest {
  directory: UserDirectoryUnderTest & TeamDirectory;
  /** The trail a store appends to in a change's own transaction (answering `audited: true`). */
  audit?: AuditStore;
}

const hash = `$scrypt$ln=10,r=8,p=1$${'A'.repeat(22)}$${'B'.repeat(43)}`;
const acme = (role: string): Membership => ({ projectKey: 'acme', clientId: 'acme', role });
const globex = (role: string): Membership => ({ projectKey: 'globex', clientId: 'globex', role });

/** Alice admin of acme, Bob agent of acme and admin of globex, Carol viewer of globex only. */
async function seed(directory: TeamDirectoryUnderTest['directory']) {
  await directory.addUser({
    id: 'alice',
    email: 'alice@example.com',
    name: 'Alice',
    passwordHash: hash,
    memberships: [acme('admin')],
  });
  await directory.addUser({
    id: 'bob',
    email: 'bob@example.com',
    name: 'Bob',
    passwordHash: hash,
    memberships: [globex('admin'), acme('agent')],
  });
  await directory.addUser({
    id: 'carol',
    email: 'carol@example.com',
    name: 'Carol',
    passwordHash: hash,
    memberships: [globex('viewer')],
  });
}

const roleChanged = (before: Membership[]): AuditEvent => ({
  projectKey: 'acme',
  type: 'member-role-changed',
  actor: 'alice@example.com',
  session: null,
  subject: 'bob',
  data: { from: before.map((membership) => membership.role) },
  at: 5_000,
});

/**
 * Conformance suite for a {@link TeamDirectory}: call it inside a test file with a factory returning a
 * fresh, empty directory (and the audit store of its database, when it appends in the change's own
 * transaction). It checks member lists, role changes, additions and removals, the "keep one admin" rule
 * also under concurrency, accounts made only for a free address, the audit event, and hostile input.
 *
 * @example
 * testTeamDirectory(async () => ({ directory: createMemoryUserDirectory() }));
 */
export function testTeamDirectory(make: () => TeamDirectoryUnderTest | Promise<TeamDirectoryUnderTest>): void {
  describe('TeamDirectory conformance', () => {
    it("lists a project's members by email, each with that project's memberships only", async () => {
      const { directory } = await make();
      await seed(directory);
      const members = await directory.listMembers('acme');
      expect(members.map((member) => [member.user.email, member.memberships])).toEqual([
        ['alice@example.com', [acme('admin')]],
        ['bob@example.com', [acme('agent')]],
      ]);
      expect(members[0]!.user).toMatchObject({ id: 'alice', name: 'Alice' });
      expect(await directory.listMembers('initech')).toEqual([]);
    });

    it("sets a member's role in one project, and the account reads it at once", async () => {
      const { directory } = await make();
      await seed(directory);
      const result = await directory.changeMembership({ userId: 'bob', projectKey: 'acme', role: 'viewer' });
      expect(result).toMatchObject({ ok: true, before: [acme('agent')] });
      expect((await directory.getAccount('bob'))?.memberships).toEqual([globex('admin'), acme('viewer')]);
    });

    it('adds a membership only when given a client, and removes all of a project', async () => {
      const { directory } = await make();
      await seed(directory);
      expect(await directory.changeMembership({ userId: 'carol', projectKey: 'acme', role: 'agent' })).toEqual({
        ok: false,
        reason: 'not_member',
      });
      expect(
        await directory.changeMembership({ userId: 'carol', projectKey: 'acme', role: 'agent', clientId: 'acme' }),
      ).toMatchObject({ ok: true, before: [] });
      expect((await directory.getAccount('carol'))?.memberships).toEqual([globex('viewer'), acme('agent')]);
      expect(await directory.changeMembership({ userId: 'carol', projectKey: 'acme', remove: true })).toMatchObject({
        ok: true,
        before: [acme('agent')],
      });
      expect((await directory.getAccount('carol'))?.memberships).toEqual([globex('viewer')]);
      expect(await directory.changeMembership({ userId: 'carol', projectKey: 'acme', remove: true })).toEqual({
        ok: false,
        reason: 'not_member',
      });
    });

    it('refuses to take the role from its last holder, changing nothing; another holder lets it go', async () => {
      const { directory } = await make();
      await seed(directory);
      for (const change of [
        { userId: 'alice', projectKey: 'acme', role: 'agent', keepRole: 'admin' },
        { userId: 'alice', projectKey: 'acme', remove: true as const, keepRole: 'admin' },
      ])
        expect(await directory.changeMembership(change)).toEqual({ ok: false, reason: 'last_role_holder' });
      expect((await directory.getAccount('alice'))?.memberships).toEqual([acme('admin')]);
      // Without the rule, or for a member who does not hold the role, nothing stops the change.
      expect(
        await directory.changeMembership({ userId: 'bob', projectKey: 'acme', role: 'viewer', keepRole: 'admin' }),
      ).toMatchObject({ ok: true });
      await directory.changeMembership({ userId: 'bob', projectKey: 'acme', role: 'admin', keepRole: 'admin' });
      expect(
        await directory.changeMembership({ userId: 'alice', projectKey: 'acme', remove: true, keepRole: 'admin' }),
      ).toMatchObject({ ok: true, before: [acme('admin')] });
    });

    it('keeps one admin when two admins demote each other at the same moment', async () => {
      const { directory } = await make();
      await seed(directory);
      await directory.changeMembership({ userId: 'bob', projectKey: 'acme', role: 'admin' });
      const results = await Promise.all([
        directory.changeMembership({ userId: 'alice', projectKey: 'acme', role: 'agent', keepRole: 'admin' }),
        directory.changeMembership({ userId: 'bob', projectKey: 'acme', remove: true, keepRole: 'admin' }),
      ]);
      expect(results.filter((result) => result.ok)).toHaveLength(1);
      expect(results.filter((result) => !result.ok)).toEqual([{ ok: false, reason: 'last_role_holder' }]);
      const admins = (await directory.listMembers('acme')).filter((member) =>
        member.memberships.some((membership) => membership.role === 'admin'),
      );
      expect(admins).toHaveLength(1);
    });

    it('adds one user to two projects at the same moment, and an add-only change leaves a member as they are', async () => {
      const { directory } = await make();
      await seed(directory);
      const [b2b, initech] = await Promise.all([
        directory.changeMembership({
          userId: 'carol',
          projectKey: 'acme',
          role: 'agent',
          clientId: 'acme',
          addOnly: true,
        }),
        directory.changeMembership({
          userId: 'carol',
          projectKey: 'initech',
          role: 'viewer',
          clientId: 'initech',
          addOnly: true,
        }),
      ]);
      expect([b2b.ok, initech.ok]).toEqual([true, true]);
      expect((await directory.getAccount('carol'))?.memberships).toHaveLength(3);
      expect(
        await directory.changeMembership({
          userId: 'bob',
          projectKey: 'acme',
          role: 'admin',
          clientId: 'acme',
          addOnly: true,
        }),
      ).toEqual({ ok: false, reason: 'already_member' });
      expect((await directory.getAccount('bob'))?.memberships).toEqual([globex('admin'), acme('agent')]);
    });

    it('appends the audit event in the change itself when it says so, built from the memberships before', async () => {
      const { directory, audit } = await make();
      await seed(directory);
      const result = await directory.changeMembership(
        { userId: 'bob', projectKey: 'acme', role: 'viewer' },
        roleChanged,
      );
      expect(result).toMatchObject({ ok: true });
      const audited = result.ok && result.audited;
      expect(audited).toBe(audit !== undefined);
      if (audit) {
        const records = await audit.list({ projectKey: 'acme' });
        expect(records).toMatchObject([{ type: 'member-role-changed', subject: 'bob', data: { from: ['agent'] } }]);
      }
    });

    it('changes nothing when the audit event it appends in the change cannot be kept', async () => {
      const { directory, audit } = await make();
      await seed(directory);
      const broken = (before: Membership[]) => ({ ...roleChanged(before), at: Number.NaN });
      const change = directory.changeMembership({ userId: 'bob', projectKey: 'acme', role: 'viewer' }, broken);
      if (audit) {
        await expect(change).rejects.toThrow();
        expect((await directory.getAccount('bob'))?.memberships).toEqual([globex('admin'), acme('agent')]);
        expect(await audit.list({ projectKey: 'acme' })).toEqual([]);
      } else expect(await change).toMatchObject({ ok: true, audited: false });
    });

    it('makes an account only for a free address, and finds users by email', async () => {
      const { directory } = await make();
      await seed(directory);
      const fields = { name: 'Dan', passwordHash: hash, emailVerified: true, memberships: [acme('agent')] };
      expect(await directory.createUser({ ...fields, email: 'alice@example.com' })).toBeNull();
      expect((await directory.getAccount('alice'))?.user.name).toBe('Alice');
      const created = await directory.createUser({ ...fields, email: 'dan@example.com' });
      expect(created).toMatchObject({
        user: { email: 'dan@example.com', name: 'Dan', emailVerified: true },
        memberships: [acme('agent')],
      });
      expect(await directory.getAccount(created!.user.id)).toEqual(created);
      expect(await directory.findUserByEmail('dan@example.com')).toEqual(created!.user);
      expect(await directory.findUserByEmail('nobody@example.com')).toBeNull();
      expect((await directory.findCredentials('dan@example.com'))?.passwordHash).toBe(hash);
    });

    it('answers hostile input as a miss, never a store error', async () => {
      const { directory } = await make();
      await seed(directory);
      for (const hostile of ['\u0000', 'bob\ud800', 'x'.repeat(100_000), '']) {
        expect(await directory.listMembers(hostile)).toEqual([]);
        expect(await directory.findUserByEmail(hostile)).toBeNull();
        const change = await directory.changeMembership({ userId: hostile, projectKey: hostile, role: hostile });
        expect(change.ok).toBe(false);
        expect(await directory.changeMembership({ userId: 'bob', projectKey: hostile, remove: true })).toMatchObject({
          ok: false,
        });
      }
      expect((await directory.getAccount('bob'))?.memberships).toEqual([globex('admin'), acme('agent')]);
    });
  });
}
