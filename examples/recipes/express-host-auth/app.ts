// An Express app with its own sign-in — not Deskpilot's sessions — serving the chat: a passport-style
// middleware puts the signed-in user on `req.user`, and the chat takes identity and flags from there
// (`expressHost(request).req.user`), never from what a request body claims.
import { chatRouter, expressHost } from '@deskpilot/chat-express';
import { createChatHandler, type ChatHandler } from '@deskpilot/core';
import {
  createMemoryApprovalStore,
  createMemoryChatStore,
  type ChatStore,
  type HostChatContext,
} from '@deskpilot/core/chat';
import { createDemoCommerceBackend, createDemoModel, createDemoTicketBackend } from '@deskpilot/core/demo';
import express from 'express';

/** Who the app's own sign-in says is asking. */
export interface AppUser {
  email: string;
  projectKey: string;
  role: 'admin' | 'agent';
}

// What passport's types do for `req.user`: the app declares its user once.
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      user?: AppUser;
    }
  }
}

/** The chat context of a signed-in user: their identity, and the flags the app gives their role. */
function chatContextOf(user: AppUser): HostChatContext {
  return {
    userEmail: user.email,
    projectKey: user.projectKey,
    userRole: user.role,
    canViewOrders: true,
    canRefundOrders: user.role === 'admin',
  };
}

/** The app: its bearer-token sign-in (users by token), then the chat behind it. */
export function createHostAuthApp(users: ReadonlyMap<string, AppUser>): {
  app: express.Express;
  chat: ChatHandler;
  store: ChatStore;
} {
  const store = createMemoryChatStore();
  const chat = createChatHandler({
    store,
    approvalStore: createMemoryApprovalStore(),
    models: { fallback: createDemoModel() },
    commerce: createDemoCommerceBackend(),
    tickets: createDemoTicketBackend(),
    // The app's sign-in ran before the chat: no user, no chat (401).
    resolveContext: (request) => {
      const { user } = expressHost(request).req;
      return user ? chatContextOf(user) : null;
    },
  });
  const app = express();
  // The app's own authentication, as passport's strategies do it: a user on `req.user`, or none.
  app.use((req, _res, next) => {
    const token = /^Bearer (\S+)$/.exec(req.get('authorization') ?? '')?.[1];
    const user = token === undefined ? undefined : users.get(token);
    if (user) req.user = user;
    next();
  });
  app.use(chatRouter(chat));
  return { app, chat, store };
}
