import { demoUsers } from '../demo/demo-users.js';
import { createSessionService, type SessionServiceOptions } from '../session/create-session-service.js';
import { createMemorySessionStore } from '../session/memory-session-store.js';
import { createMemoryUserDirectory } from '../session/memory-user-directory.js';
import type { SessionModule } from '../session/session-service.js';
import { createFakeClock } from './fake-clock.js';

/** A low scrypt cost for tests: a sign-in in microseconds, not tens of milliseconds. */
const testPasswordHash = { cost: 1024 } as const;

/**
 * A session service for a module's tests: memory stores, the demo users (`alice@example.com` /
 * `alice-demo-password`, `bob@example.com` / `bob-demo-password`), a fake clock and a cheap password
 * hash; `options` are the service's own (its `modules` among them).
 *
 * @example
 * const { service, clock } = await createTestSessionService({ modules: [createMagicLinkModule(options)] });
 * const handler = createSessionHandler({ service, allowedOrigins: ['http://localhost:3000'] });
 */
export async function createTestSessionService<const Modules extends readonly SessionModule[] = []>(
  options: Partial<SessionServiceOptions<Modules>> = {},
) {
  const clock = createFakeClock();
  const store = createMemorySessionStore();
  const directory = createMemoryUserDirectory({ passwordHash: testPasswordHash });
  for (const user of demoUsers) await directory.addUser(user);
  const service = createSessionService<Modules>({
    store,
    directory,
    now: clock.now,
    passwordHash: testPasswordHash,
    ...options,
  });
  return { clock, store, directory, service };
}

/** The demo users' credentials, as {@link createTestSessionService} seeds them. */
export const testUsers = {
  alice: { email: 'alice@example.com', password: 'alice-demo-password' },
  bob: { email: 'bob@example.com', password: 'bob-demo-password' },
} as const;

/** `name=value` from a `Set-Cookie` value, ready to send back as a `Cookie` header. */
export function cookiePair(setCookie: string): string {
  return setCookie.split(';')[0]!;
}

/** The API of a service's module by name (for a service whose modules are not typed), or a failure naming it. */
export function moduleApi<Api>(service: { modules: Readonly<Record<string, unknown>> }, name: string): Api {
  const api = service.modules[name];
  if (api === undefined) throw new Error(`The service has no ${name} module.`);
  return api as Api;
}
