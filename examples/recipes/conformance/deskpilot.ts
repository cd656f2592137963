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
  type HostChatContext,
  type HttpRequest,
  type Session,
} from '@deskpilot/core';
import { createDemoCommerceBackend, createDemoModel, createDemoTicketBackend, demoUsers } from '@deskpilot/core/demo';

/** The studio's origin in the suite: the one page allowed to call both services. */
export const studioOrigin = 'http://studio.test';

/** The chat's bounds in the suite: small, so that the suite meets them. */
export const chatPolicy = { stepBudget: 2, user: { limit: 10, windowMs: 60_000 } } as const;

/**
 * Who is asking, from the host's own session — never from the body: identity, project and role, and
 * the write capabilities of admins (everyone reads). The recipes' policy; a host has its own.
 */
export function chatContextOf(session: Session): HostChatContext {
  const admin = session.role === 'admin';
  return {
    userEmail: session.user.email,
    projectKey: session.projectKey,
    userRole: session.role,
    businessType: session.projectKey.endsWith('-b2b') ? 'b2b' : 'b2c',
    canRefundOrders: admin,
    canCancelOrders: admin,
    canCreateTickets: admin,
    canUpdateTickets: admin,
  };
}

export async function createDeskpilot() {
  // A low scrypt cost: the suite signs in a dozen times per host.
  const passwordHash = { cost: 1024 };
  const directory = createMemoryUserDirectory({ passwordHash });
  for (const user of demoUsers) await directory.addUser(user);
  const sessions = createSessionService({
    store: createMemorySessionStore(),
    directory,
    passwordHash,
    cookie: { secure: false },
  });
  const sessionHandler = createSessionHandler({ service: sessions, allowedOrigins: [studioOrigin] });
  const chatHandler = createChatHandler({
    store: createMemoryChatStore(),
    approvalStore: createMemoryApprovalStore(),
    models: { fallback: createDemoModel() },
    commerce: createDemoCommerceBackend(),
    tickets: createDemoTicketBackend(),
    // The chat is served beside the session routes: identity and flags come from the session cookie.
    resolveContext: async (request: HttpRequest) => {
      const resolved = await sessions.resolve(request.headers.get('cookie'));
      return resolved && chatContextOf(resolved.session);
    },
    stepBudget: chatPolicy.stepBudget,
    limits: { user: { policy: chatPolicy.user } },
    allowedOrigins: [studioOrigin],
  });
  return { sessions, sessionHandler, chatHandler };
}

export type Deskpilot = Awaited<ReturnType<typeof createDeskpilot>>;
