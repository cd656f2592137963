import type { CommerceBackend } from '../../chat/backends/commerce-backend.js';
import { createDemoProjectStore } from '../backend/demo-project-store.js';
import type { BackendCall } from '../backend/run-idempotent-write.js';
import { createDemoCommerceReads } from './demo-commerce-reads.js';
import { createDemoCommerceWrites, type DemoCommerceState } from './demo-commerce-writes.js';
import { seedDemoCommerce } from './seed-demo-commerce.js';

/** Options of {@link createDemoCommerceBackend}. */
export interface DemoCommerceBackendOptions {
  /** Clock for the timestamps of writes, in epoch milliseconds. @default Date.now */
  now?: () => number;
  /** Projects held at once; the least recently used one beyond this is reseeded on next use. @default 1000 */
  maxProjects?: number;
}

/** The in-memory demo {@link CommerceBackend}, with a log of the writes it ran. */
export interface DemoCommerceBackend extends CommerceBackend {
  /** Write calls that ran, oldest first (idempotent replays are not logged): for tests. */
  readonly calls: BackendCall[];
  // The demo speaks b2b as well: these are always there.
  getBusinessUnit: NonNullable<CommerceBackend['getBusinessUnit']>;
  listQuotes: NonNullable<CommerceBackend['listQuotes']>;
}

/**
 * Creates a deterministic in-memory commerce backend. Every project key gets its own data, seeded
 * from the key (the same in every process); writes change only that project. `ORD-1001` is delivered
 * and refundable, `ORD-1002` is paid and cancellable, `SKU-1001` is a "Trail Running Shoe".
 *
 * @example
 * const commerce = createDemoCommerceBackend();
 * const order = await commerce.getOrder('acme-b2c', 'ORD-1001');
 */
export function createDemoCommerceBackend(options: DemoCommerceBackendOptions = {}): DemoCommerceBackend {
  const now = options.now ?? Date.now;
  const calls: BackendCall[] = [];
  const projects = createDemoProjectStore<DemoCommerceState>(
    (projectKey) => ({ ...seedDemoCommerce(projectKey), records: new Map() }),
    options.maxProjects ?? 1000,
  );
  return { calls, ...createDemoCommerceReads(projects), ...createDemoCommerceWrites({ projects, calls, now }) };
}
