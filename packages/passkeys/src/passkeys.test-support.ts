import { createTestSessionService } from '@deskpilot/core/testing';
import type { SessionServiceOptions } from '@deskpilot/core/session';

export const alice = { email: 'alice@example.com', password: 'alice-demo-password' } as const;
export const bob = { email: 'bob@example.com', password: 'bob-demo-password' } as const;

/** A session service on memory stores with the demo users and a fake clock, its modules untyped. */
export async function createTestSessions(options: Partial<SessionServiceOptions> = {}) {
  return createTestSessionService(options);
}

/** `name=value` from a `Set-Cookie` value, ready to send back as a `Cookie` header. */
export function cookiePair(setCookie: string): string {
  return setCookie.split(';')[0]!;
}

/** The API of a service's module by name (a test's service is created untyped), or a failure naming it. */
export function moduleApi<Api>(service: { modules: Readonly<Record<string, unknown>> }, name: string): Api {
  const api = service.modules[name];
  if (api === undefined) throw new Error(`The service has no ${name} module.`);
  return api as Api;
}
