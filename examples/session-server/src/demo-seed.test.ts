import { demoUsers } from '@deskpilot/core/demo';
import { verifyPassword } from '@deskpilot/core/session';
import { expect, it } from 'vitest';
import { seededDemoUsers } from './demo-seed.ts';

it('seeds every demo user with a hash of its published password, and nothing else changed', async () => {
  expect(seededDemoUsers).toHaveLength(demoUsers.length);
  for (const [index, user] of demoUsers.entries()) {
    const { passwordHash, ...seeded } = seededDemoUsers[index]!;
    const { password, ...published } = user;
    expect(seeded).toEqual(published);
    expect(await verifyPassword(password, passwordHash)).toBe(true);
    expect(await verifyPassword(`${password}!`, passwordHash)).toBe(false);
  }
});
