import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  DeskpilotError,
  createReadinessCheck,
  describeError,
  healthResponse,
  problemResponse,
  readinessResponse,
  requireSession,
} from '@deskpilot/core';
import { fetchSession } from '@deskpilot/core/proxy';
import { writeResponse } from '@deskpilot/core/node';
import { createIdentityProxy, createSessionRoutesProxy } from '@deskpilot/session-express';
import express from 'express';
import type { Logger } from 'pino';
import { requestLogging } from '../../shared/logging.ts';
import { mountMetrics, routeLabels } from '../../shared/metrics.ts';
import { chatContextFor, fetchChatIdentity, toolsGrantFor, usageContextFor } from './chat-context.ts';
import { createDeskpilotClient, DeskpilotClientError } from '@deskpilot/client';
import { teamRoutes } from '@deskpilot/core/routes';
import type { StudioConfig } from './config.ts';
import { createDataApi } from './data-api.ts';

/** The studio's routes, as metrics label them: the page's files under `/assets/*`, the data API under `/api/*`, anything else `other`. */
const routes = [
  '/healthz',
  '/readyz',
  '/metrics',
  '/',
  '/index.html',
  '/studio/session',
  '/studio/chat-context',
  '/studio/tools-grant',
  '/studio/usage-context',
  '/sessions',
  '/sessions/current',
  '/sessions/current/project',
];

const webRoot = fileURLToPath(new URL('../dist', import.meta.url));
// Longest the readiness probe waits on the session service.
const readinessTimeoutMs = 2_000;

/**
 * Builds the studio: the page, the session routes on the studio's origin, the chat context for the
 * page, and `/api/*` proxied with stamped identity to the data API (the example's own unless
 * DATA_API_URL is set).
 */
export async function createStudioApp(config: StudioConfig, logger: Logger) {
  if (!existsSync(`${webRoot}/index.html`))
    throw new Error('The page is not built: run `npm run build -w examples/studio` (the root `npm start` does).');
  const prefix = config.COOKIE_PREFIX;
  const dataApi = config.DATA_API_URL
    ? undefined
    : await listenOnLoopback(createDataApi({ prefix, logger: logger.child({ component: 'data-api' }) }));
  const dataApiUrl = config.DATA_API_URL ?? dataApi!.url;

  // Ready: this process is not draining, and the session service (every sign-in goes through it) is
  // up. Its liveness, not its readiness: a database outage shows on the session service's own probe,
  // and taking every studio out with it would only turn an error page into no page.
  const readiness = createReadinessCheck({
    checks: {
      session_service: async () => {
        const response = await fetch(new URL('/healthz', config.SESSION_SERVICE_URL), {
          signal: AbortSignal.timeout(readinessTimeoutMs),
        });
        await response.body?.cancel();
        if (!response.ok) throw new Error(`the session service answered ${response.status}`);
      },
    },
    timeoutMs: readinessTimeoutMs,
    onCheckFailed: (name, error) => logger.warn({ check: name }, `not ready: ${name}: ${describeError(error)}`),
  });

  const app = express();
  app.disable('x-powered-by');
  // Its request id goes on to the session service and the data API with the proxied requests.
  app.use(requestLogging(logger));
  const metrics = await mountMetrics(app, config, {
    service: 'studio',
    routeOf: routeLabels(routes, ['/api/', '/assets/']),
  });
  app.get('/healthz', (_req, res) => writeResponse(res, healthResponse()));
  app.get('/readyz', async (_req, res) => writeResponse(res, readinessResponse(await readiness())));
  app.use((_req, res, next) => {
    res.set({
      'content-security-policy': `default-src 'self'; connect-src 'self' ${new URL(config.CHAT_SERVICE_URL).origin}; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'`,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
    });
    next();
  });
  app.use(createSessionRoutesProxy({ sessionServiceUrl: config.SESSION_SERVICE_URL }));
  app.use('/api', createIdentityProxy({ sessionServiceUrl: config.SESSION_SERVICE_URL, target: dataApiUrl, prefix }));

  // The session of a browser request, asked of the session service (its correlation headers passed on).
  const sessionOf = (req: express.Request) =>
    fetchSession(req.headers.cookie, {
      sessionServiceUrl: config.SESSION_SERVICE_URL,
      cookieName: `${prefix}_session`,
      requestHeaders: req.headers,
    });

  // Whether the signed-in user administers a project from this session, as the session service
  // decides for its own team routes (an admin membership, an admin of its organisation, the sign-in its
  // organisation requires): a read of the project's role policy, asked with the session cookie alone.
  const administersFrom = (cookieHeader: string | undefined) => async (projectKey: string) => {
    const cookie = (cookieHeader ?? '')
      .split(';')
      .map((pair) => pair.trim())
      .filter((pair) => pair.slice(0, pair.indexOf('=')) === `${prefix}_session`)
      .join('; ');
    const team = createDeskpilotClient({
      sessionBaseUrl: config.SESSION_SERVICE_URL.replace(/\/$/, ''),
      fetch: (url, init) => {
        const headers = new Headers(init?.headers);
        headers.set('cookie', cookie);
        return fetch(url, { ...init, headers, signal: AbortSignal.timeout(5_000) });
      },
    }).routes(teamRoutes);
    try {
      await team.teamPolicy({ projectKey });
      return true;
    } catch (error) {
      if (DeskpilotClientError.isInstance(error, 'forbidden') || DeskpilotClientError.isInstance(error, 'not_found'))
        return false;
      if (DeskpilotClientError.isInstance(error, 'sso_required'))
        throw new DeskpilotError('sso_required', {
          detail: error.message,
          ...(error.provider ? { provider: error.provider } : {}),
        });
      throw new DeskpilotError('upstream_unavailable', { detail: 'The session service cannot answer.', cause: error });
    }
  };

  // Who is signed in, for the page's first look: `{ session: null }` when no one is, a 200 either way
  // (the session service's 401 would show in the browser console on every signed-out load).
  app.get('/studio/session', async (req, res) => {
    res.set('cache-control', 'no-store');
    try {
      res.json({ session: await sessionOf(req) });
    } catch (error) {
      await writeResponse(res, problemResponse(error));
    }
  });

  /**
   * Answers with what `answer` builds from the signed-in user's session and flags (the project's role
   * policy as it is now: a change shows on the next request), or 401. Never cached: it follows the session.
   */
  const forSignedIn =
    (
      answer: (
        identity: NonNullable<Awaited<ReturnType<typeof fetchChatIdentity>>>,
        req: express.Request,
      ) => Promise<unknown>,
    ) =>
    async (req: express.Request, res: express.Response) => {
      res.set('cache-control', 'no-store');
      try {
        const identity = await fetchChatIdentity(req.headers.cookie, {
          sessionServiceUrl: config.SESSION_SERVICE_URL,
          cookieName: `${prefix}_session`,
          requestHeaders: req.headers,
        });
        const required = await requireSession(req.headers.cookie, async () => identity?.session ?? null);
        if (!required.ok) return await writeResponse(res, required.response);
        res.json(await answer(identity!, req));
      } catch (error) {
        await writeResponse(res, problemResponse(error));
      }
    };

  // What the page needs to talk to the chat service for the signed-in user: where it is, and the
  // context (signed when the chat service requires grants).
  app.get(
    '/studio/chat-context',
    forSignedIn(async ({ session, capabilities }) => ({
      chatServiceUrl: config.CHAT_SERVICE_URL,
      context: await chatContextFor(session, config.CHAT_CONTEXT_SECRET, capabilities),
    })),
  );

  // The Usage page's context for a project: the chat context for the session's own, or, for a project
  // the session service says the user administers from here, a grant for the Usage API alone.
  app.get(
    '/studio/usage-context',
    forSignedIn(async (identity, req) => {
      const asked = req.query.projectKey;
      const projectKey = typeof asked === 'string' && asked !== '' ? asked : identity.session.projectKey;
      const administers = administersFrom(req.headers.cookie);
      return {
        chatServiceUrl: config.CHAT_SERVICE_URL,
        context: await usageContextFor(identity, projectKey, config.CHAT_CONTEXT_SECRET, administers),
      };
    }),
  );

  // A grant for another agent (an IDE assistant, a desktop client) to call the chat's tools over MCP
  // as this user: refused by the chat itself, so the agent cannot answer the cards its writes propose.
  app.get(
    '/studio/tools-grant',
    forSignedIn(async ({ session, capabilities }) => {
      if (!config.CHAT_CONTEXT_SECRET)
        throw new DeskpilotError('not_found', { detail: 'The chat service signs no grants (CHAT_CONTEXT_SECRET).' });
      return {
        mcpUrl: new URL('/mcp', config.CHAT_SERVICE_URL).href,
        ...(await toolsGrantFor(session, config.CHAT_CONTEXT_SECRET, capabilities)),
      };
    }),
  );

  app.use(express.static(webRoot, { index: 'index.html', maxAge: 0 }));
  app.use((_req, res) =>
    writeResponse(res, problemResponse(new DeskpilotError('not_found', { detail: 'No such route.' }))),
  );

  // Called once the studio serves nothing more: the data API's kept-alive connections are all idle.
  const close = () =>
    dataApi
      ? new Promise<void>((resolve) => {
          dataApi.server.close(() => resolve());
          dataApi.server.closeAllConnections();
        })
      : Promise.resolve();
  return { app, dataApiUrl, readiness, metrics, close };
}

async function listenOnLoopback(app: express.Express): Promise<{ url: string; server: Server }> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}
