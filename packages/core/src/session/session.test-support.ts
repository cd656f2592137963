import { createTestSessionService } from '../testing/create-test-session-service.js';
import type { SessionServiceOptions } from './create-session-service.js';

/** Low scrypt cost keeps tests quick; the production default is exercised in password.test.ts. */
export const testPasswordHash = { cost: 1024 } as const;

export const alice = { email: 'alice@example.com', password: 'alice-demo-password' } as const;
export const bob = { email: 'bob@example.com', password: 'bob-demo-password' } as const;

/** A session service on memory stores with the demo users and a fake clock. */
export async function createTestSessions(options: Partial<SessionServiceOptions> = {}) {
  return createTestSessionService(options);
}

/** `name=value` from a `Set-Cookie` value, ready to send back as a `Cookie` header. */
export function cookiePair(setCookie: string): string {
  return setCookie.split(';')[0]!;
}

/** The token inside a `Set-Cookie` value. */
export function tokenOf(setCookie: string): string {
  return cookiePair(setCookie).slice(cookiePair(setCookie).indexOf('=') + 1);
}

/** The API of a service's module by name (a test's service is created untyped), or a failure naming it. */
export function moduleApi<Api>(service: { modules: Readonly<Record<string, unknown>> }, name: string): Api {
  const api = service.modules[name];
  if (api === undefined) throw new Error(`The service has no ${name} module.`);
  return api as Api;
}
