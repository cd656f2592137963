import { describe, expect, it } from 'vitest';
import { testUserDirectory } from '../testing/test-user-directory.js';
import { createMemoryUserDirectory } from './memory-user-directory.js';
import { verifyPassword } from './password.js';
import { testPasswordHash } from './session.test-support.js';

const member = [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }];
// Made by the earlier `hashPassword` (format `scrypt$N$r$p$salt$hash`) for "correct horse".
const legacyCheapHash = 'scrypt$1024$8$1$INr8ieQ---QSm1PunO9u-w$EUvwS303eeyaw2c_pk1B8a07nDYqpIyMeQILoyBTCVI';

testUserDirectory(() => createMemoryUserDirectory({ passwordHash: testPasswordHash }));

describe('createMemoryUserDirectory', () => {
  it('hashes a plain password at its parameters, OWASP’s by default', async () => {
    const cheap = createMemoryUserDirectory({ passwordHash: testPasswordHash });
    const standard = createMemoryUserDirectory();
    for (const directory of [cheap, standard]) {
      await directory.addUser({
        id: 'u1',
        email: 'rep@example.com',
        name: 'Rep',
        password: 'correct horse',
        memberships: member,
      });
    }
    const cheapHash = (await cheap.findCredentials('rep@example.com'))!.passwordHash;
    const standardHash = (await standard.findCredentials('rep@example.com'))!.passwordHash;
    expect(cheapHash).toMatch(/^\$scrypt\$ln=10,r=8,p=1\$/);
    expect(standardHash).toMatch(/^\$scrypt\$ln=17,r=8,p=1\$/);
    expect(await verifyPassword('correct horse', cheapHash)).toBe(true);
  }, 30_000);

  it('adds a user with an existing hash as it is, and refuses one it cannot read', async () => {
    const directory = createMemoryUserDirectory({ passwordHash: testPasswordHash });
    await directory.addUser({
      id: 'u1',
      email: 'rep@example.com',
      name: 'Rep',
      passwordHash: legacyCheapHash,
      memberships: member,
    });
    expect(await directory.findCredentials('rep@example.com')).toEqual({ userId: 'u1', passwordHash: legacyCheapHash });
    await expect(
      directory.addUser({ email: 'x@example.com', name: 'X', passwordHash: 'md5$abc', memberships: [] }),
    ).rejects.toThrow(TypeError);
    expect(await directory.findCredentials('x@example.com')).toBeNull();
  });
});
