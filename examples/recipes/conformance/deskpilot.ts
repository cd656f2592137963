// What every recipe serves: Deskpilot's session and chat handlers on memory stores, the demo users,
// backends and model — assembled once here, so that the recipes hold only their stack's glue.
import {
  createChatHandler,
  createMemoryApprovalStore,
  createMemoryChatStore,
  createMemorySessionStore,
  createMemoryUserDirectory,
  createSessionHandler,
  createSessionService,
} from '@deskpilot/core';
import { createDemoCommerceBackend, createDemoModel, createDemoTicketBackend, demoUsers } from '@deskpilot/core/demo';

/** The studio's origin in the suite: the one page allowed to call both services. */
export const studioOrigin = 'http://studio.test';

export async function createDeskpilot() {
  // A low scrypt cost: the suite signs in a dozen times per host.
  const passwordHash = { cost: 1024 };
  const directory = createMemoryUserDirectory({ passwordHash });
  for (const user of demoUsers) await directory.addUser(user);
  const sessions = createSessionService({ store: createMemorySessionStore(), directory, passwordHash, cookie: { secure: false } });
  const sessionHandler = createSessionHandler({ service: sessions, allowedOrigins: [studioOrigin] });
  const chatHandler = createChatHandler({
    store: createMemoryChatStore(),
    approvalStore: createMemoryApprovalStore(),
    models: { fallback: createDemoModel() },
    commerce: createDemoCommerceBackend(),
    tickets: createDemoTicketBackend(),
    allowedOrigins: [studioOrigin],
    logger: { warn: () => {}, error: () => {} },
  });
  return { sessions, sessionHandler, chatHandler };
}

export type Deskpilot = Awaited<ReturnType<typeof createDeskpilot>>;
