import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as crypto from 'node:crypto';
import { createMemoryUserDirectory } from './memory-user-directory.js';
import { hashPassword, verifyPassword } from './password.js';

// Count scrypt runs (and their cost) to show that every login path does the same work.
vi.mock(import('node:crypto'), async (importOriginal) => {
  const actual = await importOriginal();
  return { ...actual, scrypt: vi.fn(actual.scrypt) as unknown as typeof actual.scrypt };
});
const scrypt = vi.mocked(crypto.scrypt);

const member = [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }];

describe('createMemoryUserDirectory', () => {
  beforeEach(() => {
    scrypt.mockClear();
  });

  it('verifies the right password and returns the account with memberships', async () => {
    const directory = createMemoryUserDirectory({ passwordHash: { cost: 1024 } });
    await directory.addUser({ id: 'u1', email: ' Rep@Example.COM', name: 'Rep', password: 'correct horse', memberships: member });
    expect(await directory.verifyCredentials('rep@example.com', 'correct horse')).toEqual({
      user: { id: 'u1', email: 'rep@example.com', name: 'Rep' },
      memberships: member,
    });
    expect(await directory.getAccount('u1')).not.toBeNull();
    expect(await directory.getAccount('u2')).toBeNull();
  });

  it('does the same scrypt work for an unknown email as for a wrong password', async () => {
    const directory = createMemoryUserDirectory({ passwordHash: { cost: 2048 } });
    await directory.addUser({ email: 'rep@example.com', name: 'Rep', password: 'correct horse', memberships: member });
    await directory.verifyCredentials('nobody@example.com', 'warm-up'); // the decoy hash is built once
    scrypt.mockClear();

    expect(await directory.verifyCredentials('rep@example.com', 'wrong')).toBeNull();
    const wrongPassword = scrypt.mock.calls.map((call) => call[3]);
    scrypt.mockClear();
    expect(await directory.verifyCredentials('nobody@example.com', 'wrong')).toBeNull();
    const unknownEmail = scrypt.mock.calls.map((call) => call[3]);

    expect(wrongPassword).toHaveLength(1);
    expect(unknownEmail).toEqual(wrongPassword); // same count, same cost parameters
  });

  it('replaces a user added again with the same email', async () => {
    const directory = createMemoryUserDirectory({ passwordHash: { cost: 1024 } });
    await directory.addUser({ id: 'old', email: 'rep@example.com', name: 'Rep', password: 'one', memberships: member });
    await directory.addUser({ id: 'new', email: 'REP@example.com', name: 'Rep', password: 'two', memberships: [] });
    expect(await directory.verifyCredentials('rep@example.com', 'one')).toBeNull();
    expect((await directory.verifyCredentials('rep@example.com', 'two'))?.user.id).toBe('new');
    expect(await directory.getAccount('old')).toBeNull();
  });

  it('hands out accounts nobody can change', async () => {
    const directory = createMemoryUserDirectory({ passwordHash: { cost: 1024 } });
    const memberships = [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }];
    await directory.addUser({ id: 'u1', email: 'rep@example.com', name: 'Rep', password: 'pw', memberships });
    memberships[0]!.role = 'admin';
    const account = (await directory.getAccount('u1'))!;
    expect(() => {
      account.memberships[0]!.role = 'admin';
    }).toThrow(TypeError);
    expect((await directory.getAccount('u1'))!.memberships[0]!.role).toBe('agent');
    expect(JSON.stringify(account)).not.toContain('scrypt');
  });
});

describe('hashPassword / verifyPassword', () => {
  it('uses scrypt N=16384 r=8 p=1 by default, with a fresh salt each time', async () => {
    const first = await hashPassword('secret');
    const second = await hashPassword('secret');
    expect(first).toMatch(/^scrypt\$16384\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(first).not.toBe(second);
    expect(await verifyPassword('secret', first)).toBe(true);
    expect(await verifyPassword('Secret', first)).toBe(false);
  });

  it('treats canonically equal Unicode spellings alike', async () => {
    const hash = await hashPassword('caf\u00e9', { cost: 1024 });
    expect(await verifyPassword('cafe\u0301', hash)).toBe(true);
  });

  it.each(['', 'plain', 'bcrypt$1$2$3$4$5', 'scrypt$x$8$1$salt$key', 'scrypt$16384$8$1$salt'])('returns false for the malformed hash %j', async (hash) => {
    expect(await verifyPassword('secret', hash)).toBe(false);
  });
});
