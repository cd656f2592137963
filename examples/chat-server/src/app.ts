import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { chatRouter } from '@deskpilot/chat-express';
import { createMcpEndpoint, createMcpToolSource } from '@deskpilot/mcp';
import {
  DeskpilotError,
  builtinCapabilities,
  createChatHandler,
  createReadinessCheck,
  describeError,
  healthResponse,
  problemResponse,
  readinessResponse,
} from '@deskpilot/core';
import {
  createStepUpVerifier,
  stepUpPolicy,
  purgeArchivedConversations,
  sessionCapabilities,
  type ChatLimits,
  type ChatModels,
  type ConversationTitleOptions,
  type CommerceBackend,
} from '@deskpilot/core/chat';
import { createDemoCommerceBackend, createDemoModel, createDemoTicketBackend } from '@deskpilot/core/demo';
import { fromNodeRequest, writeResponse } from '@deskpilot/core/node';
import { chatOpenApi } from '@deskpilot/core/openapi';
import { defaultSettingsMiddleware, wrapLanguageModel } from 'ai';
import express from 'express';
import type { Logger } from 'pino';
import { createUsageModule } from '@deskpilot/usage';
import { createPostgresUsageStore, usageSchema } from '@deskpilot/usage/postgres';
import { createSqliteUsageStore, usageSchema as sqliteUsageSchema } from '@deskpilot/usage/sqlite';
import type { ServerConfig } from './config.ts';
import { coreLogger, logEvents, requestLogging } from '../../shared/logging.ts';
import { allListeners, mountMetrics, routeLabels } from '../../shared/metrics.ts';
import { openStorage } from '../../shared/storage.ts';

/** The chat service's own routes, as metrics label them beside the chat handler's (anything else is `other`). */
const routes = ['/healthz', '/readyz', '/metrics', '/openapi.json', '/mcp'];

/** The chat service's feature modules' stores, in its own database: the usage roll-ups. */
const chatModules = {
  usage: {
    sqlite: { schema: sqliteUsageSchema, open: createSqliteUsageStore },
    postgres: { schema: usageSchema, open: createPostgresUsageStore },
  },
};

/**
 * A Responses API model that sends the whole conversation on every call (`store: false`), as this
 * service stores it: by default the SDK would send earlier answers as references to OpenAI's stored
 * copies, and a conversation resumed after OpenAI dropped them (30 days, zero-retention projects,
 * another key) would fail for good. Reasoning models keep their reasoning through encrypted items.
 */
const stateless = (model: Parameters<typeof wrapLanguageModel>[0]['model']) =>
  wrapLanguageModel({
    model,
    middleware: defaultSettingsMiddleware({ settings: { providerOptions: { openai: { store: false } } } }),
  });

/** How new conversations are named: a provider's model, else (the offline demo model's answers would not do) the first words. */
function titlesFrom(config: ServerConfig, models: ChatModels): ConversationTitleOptions | false {
  if (config.CONVERSATION_TITLES === 'off') return false;
  const provider = models.openai ?? models.anthropic;
  return config.CONVERSATION_TITLES === 'model' && provider ? { model: models.fallback } : {};
}

/** Models from the environment; with no key, the offline demo model answers. */
export function modelsFrom(config: ServerConfig): ChatModels & { label: string } {
  const openaiProvider = config.OPENAI_API_KEY
    ? createOpenAI({ apiKey: config.OPENAI_API_KEY, baseURL: config.OPENAI_BASE_URL })
    : undefined;
  // Compatible servers (Ollama, vLLM, LM Studio, LiteLLM) speak Chat Completions, not Responses.
  const openai =
    openaiProvider &&
    (config.OPENAI_API_MODE === 'chat'
      ? openaiProvider.chat(config.OPENAI_MODEL)
      : stateless(openaiProvider(config.OPENAI_MODEL)));
  const anthropic = config.ANTHROPIC_API_KEY
    ? createAnthropic({ apiKey: config.ANTHROPIC_API_KEY, baseURL: config.ANTHROPIC_BASE_URL })(config.ANTHROPIC_MODEL)
    : undefined;
  const fallback = openai ?? anthropic ?? createDemoModel({ delayMs: config.DEMO_MODEL_DELAY_MS });
  return { openai, anthropic, fallback, label: `${fallback.provider}:${fallback.modelId}` };
}

/** The demo commerce backend, logging each write it performs (the demo's stand-in for a shop's audit log). */
function loggedDemoCommerce(logger: Logger): CommerceBackend {
  const backend = createDemoCommerceBackend();
  const log = logger.child({ component: 'demo-commerce' });
  return {
    ...backend,
    refundOrder: (projectKey, input, options) => {
      log.info({ orderId: input.orderId, projectKey }, `refundOrder ${input.orderId} in ${projectKey}`);
      return backend.refundOrder(projectKey, input, options);
    },
    cancelOrder: (projectKey, input, options) => {
      log.info({ orderId: input.orderId, projectKey }, `cancelOrder ${input.orderId} in ${projectKey}`);
      return backend.cancelOrder(projectKey, input, options);
    },
  };
}

/**
 * Builds the chat service app: the embedded database in DATA_DIR (or Postgres with DATABASE_URL) for
 * conversations and approvals, the rate limiter in process (or shared on Redis with REDIS_URL), demo
 * backends, models, routes.
 */
export async function createApp(config: ServerConfig, logger: Logger) {
  const models = modelsFrom(config);
  // First, and bounded: an unreachable Redis stops the start with a clear message within seconds,
  // before the database is opened (or created) for nothing.
  const redis = config.REDIS_URL ? await connectSharedRedis(config.REDIS_URL) : undefined;
  if (config.SHARED_SESSIONS && !config.DATABASE_URL && config.EMBEDDED_DATABASE === 'pglite')
    throw new Error('SHARED_SESSIONS: a PGlite directory belongs to one service; share SQLite or Postgres instead');
  const storage = await openStorage(config, 'chat', chatModules).catch(async (error: unknown) => {
    await redis?.client.close();
    throw error;
  });
  const { chatStore, approvalStore } = storage;
  // A reloaded page or a second tab re-attaches to a running answer on any replica through Redis;
  // without it, in this process.
  const resumableStreams = redis
    ? await redis.createRedisResumableStreams({
        client: redis.client,
        logger: coreLogger(logger),
        leaseMs: config.RESUME_LEASE_MS,
        idleTimeoutMs: config.RESUME_IDLE_TIMEOUT_MS,
      })
    : undefined;
  // An embedded database has one chat process: it marks each running turn, so that the next start
  // records as aborted the turns a killed process cut (on Postgres, replicas find them by their lease).
  const embedded = storage.kind !== 'postgres';
  // The company's own tools: each MCP server's, behind the same capabilities and approval gate.
  const mcp =
    config.MCP_SERVERS &&
    createMcpToolSource({
      servers: config.MCP_SERVERS,
      onError: (error) => logger.warn({ component: 'mcp' }, `mcp: ${describeError(error)}`),
    });
  // On Postgres, or a SQLite file both services open (SHARED_SESSIONS), the chat service sees the
  // session service's sessions, memberships and role policies: a signed grant ends with its session or
  // its member's place in the project, and holds no flag the member's role lost since it was signed.
  // Read uncached, so another process's changes are seen: at once by an approval answer (the one a write
  // may run on), within 5 s by reads and new messages.
  const sharedSessions =
    storage.sharedSessions ?? (config.SHARED_SESSIONS && storage.kind === 'sqlite' ? storage.sessionStore : undefined);
  const grantSessions =
    config.CHAT_CONTEXT_SECRET && sharedSessions
      ? {
          capabilities: sessionCapabilities({
            sessions: sharedSessions,
            users: storage.userDirectory,
            policies: storage.rolePolicyStore,
            capabilities: { ...builtinCapabilities, ...(mcp ? mcp.capabilities : {}) },
          }),
          cacheMs: 5_000,
        }
      : undefined;
  // Each rate limit counted in Redis when it is configured: every replica sees the same counts.
  const counted = (name: string, policy: { limit: number; windowMs: number }) => ({
    policy,
    ...(redis
      ? { limiter: redis.createRedisRateLimiter({ client: redis.client, prefix: `deskpilot:${name}:`, ...policy }) }
      : {}),
  });
  const windowMs = config.RATE_LIMIT_WINDOW_MS;
  // Per client address, before the per-user limit: 10 × the per-user limit unless configured; 0 turns it off.
  const addressLimit = config.RATE_LIMIT_ADDRESS_MAX ?? config.RATE_LIMIT_MAX * 10;
  const limits: ChatLimits = {
    user: counted('chat', { limit: config.RATE_LIMIT_MAX, windowMs }),
    address: addressLimit === 0 ? false : counted('chat-address', { limit: addressLimit, windowMs }),
    // History reads: their own limit (60 per window per user), shared on Redis like the others.
    history: counted('chat-history', { limit: 60, windowMs }),
    // Agents over MCP (/mcp): their own 60 a window per user, apart from the page's.
    tools: counted('chat-tools', { limit: 60, windowMs }),
    ...(config.TOKEN_BUDGET
      ? {
          tokens: {
            policy: { limit: config.TOKEN_BUDGET, windowMs: config.TOKEN_BUDGET_WINDOW_MS },
            ...(redis
              ? {
                  limiter: redis.createRedisTokenMeter({
                    client: redis.client,
                    windowMs: config.TOKEN_BUDGET_WINDOW_MS,
                  }),
                }
              : {}),
          },
        }
      : {}),
  };
  const app = express();
  app.disable('x-powered-by');
  app.use(requestLogging(logger));
  const metrics = await mountMetrics(app, config, {
    service: 'chat-server',
    routeOf: routeLabels(() => [...routes, ...chat.paths]),
  });
  const chat = createChatHandler({
    store: chatStore,
    approvalStore,
    // Each approval proposed, approved, denied and executed lands in its project's audit trail, in the
    // approval's own transaction (the stores share one database) — with signed grants only: identity a
    // request body claims is never recorded as evidence.
    ...(config.CHAT_CONTEXT_SECRET ? { audit: storage.auditStore } : {}),
    models,
    commerce: loggedDemoCommerce(logger),
    tickets: createDemoTicketBackend(),
    ...(mcp ? { toolSources: [mcp] } : {}),
    limits,
    trustedProxies: config.TRUSTED_PROXIES,
    stepBudget: config.STEP_BUDGET,
    titles: titlesFrom(config, models),
    // What the assistant costs: each turn priced (the operator's prices first, then the maintained
    // catalogue's) and rolled up per project, user, model, tool and day in the chat's database, each
    // project's budget, and the Usage API (/chat/usage…).
    modules: [usageModule(config, storage.modules.usage, redis)],
    ...(resumableStreams ? { resumableStreams } : {}),
    markRunningTurns: embedded,
    // Silence is what a hung provider looks like: before the first chunk, and between two.
    modelCall: {
      idleTimeoutMs: config.MODEL_TIMEOUT_MS,
      maxRetries: config.MODEL_MAX_RETRIES,
      ...(config.MODEL_CALL_DEADLINE_MS === undefined ? {} : { callDeadlineMs: config.MODEL_CALL_DEADLINE_MS }),
    },
    contextBudget: { maxChars: config.HISTORY_BUDGET_CHARS },
    // Without a secret the reference server trusts the identity each body claims, as DESIGN §3 says,
    // and says so at start; `npm start` always gives it one.
    ...(config.CHAT_CONTEXT_SECRET
      ? { contextSecret: config.CHAT_CONTEXT_SECRET }
      : { identity: 'trust-request-body' as const }),
    ...(grantSessions ? { grantSessions } : {}),
    // Approvals the policy names need a fresh user verification, proved by the session service.
    ...(config.STEP_UP_SECRET
      ? {
          stepUp: {
            policy: stepUpPolicy(config.STEP_UP_POLICY),
            verifier: createStepUpVerifier({ secret: config.STEP_UP_SECRET }),
          },
        }
      : {}),
    allowedOrigins: config.ALLOWED_ORIGINS,
    logger: coreLogger(logger),
    onEvent: allListeners(logEvents(logger), metrics?.onEvent),
  });
  // Ready: the database answers at this release's schema version, and Redis answers when configured.
  const readiness = createReadinessCheck({
    checks: {
      chat_store: () => storage.checkReady(),
      ...(redis ? { redis: () => redis.checkRedisReady(redis.client) } : {}),
    },
    // An MCP server that does not answer is reported (`mcp_<name>`), never failing the probe: the chat goes on without it.
    ...(mcp ? { optional: mcp.readinessChecks } : {}),
    onCheckFailed: (name, error) => logger.warn({ check: name }, `not ready: ${name}: ${describeError(error)}`),
  });
  // Before the chat routes: no CORS, no rate limit, no grant for the probes.
  app.get('/healthz', (_req, res) => writeResponse(res, healthResponse()));
  app.get('/readyz', async (_req, res) => writeResponse(res, readinessResponse(await readiness())));
  // The contract, from the schemas the handler validates with (also committed under docs/openapi).
  const openApi = JSON.stringify(chatOpenApi({ routes: chat.routes }));
  app.get(
    '/openapi.json',
    (_req, res) => void res.type('application/json').set('cache-control', 'no-cache').send(openApi),
  );
  // The chat's tools over MCP, for agents with a grant the studio signed (never on a body's word).
  if (config.MCP_ENDPOINT && config.CHAT_CONTEXT_SECRET) {
    const endpoint = createMcpEndpoint({ tools: chat.tools, allowedOrigins: config.ALLOWED_ORIGINS });
    app.all('/mcp', (req, res, next) => {
      endpoint
        .handle(fromNodeRequest(req, req.path, { clientAddress: req.ip }))
        .then((response) => writeResponse(res, response), next);
    });
  }
  app.use(chatRouter(chat));
  app.use((_req, res) =>
    writeResponse(res, problemResponse(new DeskpilotError('not_found', { detail: 'No such route.' }))),
  );
  const close = async () => {
    await mcp?.close();
    await resumableStreams?.close();
    await redis?.client.close();
    await storage.close();
  };
  // Expired approvals nobody answered answer "denied" whether or not they are stored: purging them keeps
  // the table small (an answered one stays: the record of who decided).
  // Archived conversations go after their retention period, when one is set.
  const retentionMs = config.ARCHIVED_RETENTION_DAYS && config.ARCHIVED_RETENTION_DAYS * 86_400_000;
  // Turns whose replica died with nobody reading them: recorded aborted by whichever replica looks first.
  const cleanUp = async () => {
    await approvalStore.deleteExpired(Date.now());
    if (retentionMs) await purgeArchivedConversations(chatStore, { retentionMs });
    if (resumableStreams) await reportAborted(await chat.abortAbandonedTurns());
  };
  const reportAborted = async (count: number) => {
    if (count > 0)
      logger.warn({ turns: count }, `${count} chat turn(s) cut by a process that died, recorded as aborted`);
  };
  if (embedded) await reportAborted(await chat.abortAbandonedTurns({ all: true }));
  return {
    app,
    chat,
    models,
    readiness,
    metrics,
    storage: `${storage.label}${redis ? ', rate limits and resumable answers on Redis' : ''}`,
    // Which MCP servers the chat takes tools from, and whether /mcp serves its own: names only, never a URL or a header.
    tools: [
      ...(config.MCP_SERVERS ? [`MCP servers ${config.MCP_SERVERS.map((server) => server.name).join(', ')}`] : []),
      ...(config.MCP_ENDPOINT && config.CHAT_CONTEXT_SECRET ? ['served over MCP at /mcp'] : []),
    ].join('; '),
    cleanUp,
    close,
  };
}

/**
 * The usage module: prices, roll-ups, budgets and the Usage API. The budgets' counts are shared on
 * Redis when it is configured (every replica sees one count per project), else kept in this process.
 */
function usageModule(
  config: ServerConfig,
  store: Parameters<typeof createUsageModule>[0]['store'],
  redis: Awaited<ReturnType<typeof connectSharedRedis>> | undefined,
) {
  const meter = (windowMs: number | 'month', name: string) =>
    redis!.createRedisTokenMeter({ client: redis!.client, windowMs, prefix: `deskpilot:project-${name}:` });
  return createUsageModule({
    store,
    prices: { prices: config.MODEL_PRICES ?? {} },
    budgets: redis ? { meters: { day: meter(86_400_000, 'day'), month: meter('month', 'month') } } : {},
  });
}

/** The Redis client and what is built on it, loaded only when REDIS_URL is set: the client is ≈ 12 MiB of an idle process. */
async function connectSharedRedis(url: string) {
  const { connectRedis, ...onRedis } = await import('@deskpilot/redis');
  return { client: await connectRedis({ url }), ...onRedis };
}
