/**
 * Demo pieces, for the reference servers, tests and trying Deskpilot without a model key or a shop:
 * the offline demo model, in-memory demo commerce and ticket backends with seeded data, and the demo
 * users. Not for production. The ports they implement (`CommerceBackend`, `TicketBackend`) come from
 * `@deskpilot/core/chat`.
 *
 * @example
 * import { createDemoCommerceBackend, createDemoModel, createDemoTicketBackend } from '@deskpilot/core/demo';
 * const chat = createChatHandler({ store, approvalStore, contextSecret, models: { fallback: createDemoModel() }, commerce: createDemoCommerceBackend(), tickets: createDemoTicketBackend() });
 */
export * from './demo/model/index.js';
export * from './demo/commerce/index.js';
export * from './demo/tickets/index.js';
export * from './demo/backend/index.js';
export { demoUsers } from './demo/demo-users.js';
