import { describe, expect, it, vi } from 'vitest';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import { hashPassword, isPasswordHash, verifyPassword } from './password.js';

// A host without Node's built-ins (a worker without nodejs_compat): importing node:crypto fails.
vi.mock(import('node:crypto'), () => {
  throw new Error('No such built-in module: node:crypto');
});

const phcHash = '$scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$5rKB4yVCAsbpX/0HtUPKcWAAhGPvWUz9vMmu/9EeDbY';

describe('password hashing without node:crypto', () => {
  it('loads node:crypto only to hash or verify, so reading a stored hash still works', () => {
    expect(isPasswordHash(phcHash)).toBe(true);
  });

  it.each([
    ['hashPassword', () => hashPassword('correct horse', { cost: 1024 })],
    ['verifyPassword', () => verifyPassword('correct horse', phcHash)],
  ])('%s fails as internal, naming the hosts that have scrypt in the cause', async (_name, run) => {
    const error = await run().then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(DeskpilotError);
    expect((error as DeskpilotError).code).toBe('internal');
    // The client sees the generic problem; the operator's log reads the cause.
    expect((error as DeskpilotError).detail).not.toMatch(/node:crypto/);
    expect(((error as DeskpilotError).cause as Error).message).toBe(
      'password hashing needs node:crypto scrypt: Node, Bun, Deno, Cloudflare Workers with nodejs_compat',
    );
  });
});
