import { cookiePair, createTestSessionService, testUsers } from '../testing/create-test-session-service.js';
import type { SessionServiceOptions } from './create-session-service.js';

export { cookiePair, moduleApi } from '../testing/create-test-session-service.js';

/** Low scrypt cost keeps tests quick; the production default is exercised in password.test.ts. */
export const testPasswordHash = { cost: 1024 } as const;

export const { alice, bob } = testUsers;

/** A session service on memory stores with the demo users and a fake clock. */
export async function createTestSessions(options: Partial<SessionServiceOptions> = {}) {
  return createTestSessionService(options);
}

/** The token inside a `Set-Cookie` value. */
export function tokenOf(setCookie: string): string {
  return cookiePair(setCookie).slice(cookiePair(setCookie).indexOf('=') + 1);
}
