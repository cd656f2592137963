import express from 'express';
import type { Logger } from 'pino';
import {
  DeskpilotError,
  createReadinessCheck,
  describeError,
  createConsoleEmailSender,
  createHashGate,
  createSessionHandler,
  createSessionService,
  defineCapabilities,
  healthResponse,
  problemResponse,
  readinessResponse,
  type RecoveryModuleOptions,
  normalizeEmail,
  type NewUser,
  type RateLimiter,
  createRecoveryModule,
  createStepUpModule,
} from '@deskpilot/core/session';
import { createTeamModule } from '@deskpilot/core/team';
import { createMagicLinkModule } from '@deskpilot/magic-link';
import { createPasskeysModule } from '@deskpilot/passkeys';
import { createPostgresPasskeyStore, passkeySchema } from '@deskpilot/passkeys/postgres';
import { createSqlitePasskeyStore, passkeySchema as sqlitePasskeySchema } from '@deskpilot/passkeys/sqlite';
import { createSecretBox, createSsoModule, type SsoProvider } from '@deskpilot/sso';
import {
  createPostgresIdentityLinkStore,
  createPostgresSsoConnectionStore,
  identityLinkSchema,
} from '@deskpilot/sso/postgres';
import {
  createSqliteIdentityLinkStore,
  createSqliteSsoConnectionStore,
  identityLinkSchema as sqliteIdentityLinkSchema,
} from '@deskpilot/sso/sqlite';
import { createScimModule, type ScimModule } from '@deskpilot/scim';
import { createPostgresScimStore, scimSchema } from '@deskpilot/scim/postgres';
import { createSqliteScimStore, scimSchema as sqliteScimSchema } from '@deskpilot/scim/sqlite';
import type { SqlClient } from '@deskpilot/postgres';
import type { SqliteDatabase } from '@deskpilot/sqlite';
import { fromNodeRequest, writeResponse } from '@deskpilot/core/node';
import { sessionRouter } from '@deskpilot/session-express';
import type { ServerConfig } from './config.ts';
import { seededDemoUsers } from './demo-seed.ts';
import { coreLogger, createEmailHasher, logEvents, requestLogging } from '../../shared/logging.ts';
import { allListeners, mountMetrics, routeLabels } from '../../shared/metrics.ts';
import { openStorage, type Storage } from '../../shared/storage.ts';

/** The stores of the modules in packages of their own, on whichever engine the storage opens (their schemas migrated with it). */
const moduleStorage = {
  passkeys: {
    sqlite: { schema: sqlitePasskeySchema, open: createSqlitePasskeyStore },
    postgres: { schema: passkeySchema, open: createPostgresPasskeyStore },
  },
  sso: {
    sqlite: {
      schema: sqliteIdentityLinkSchema,
      open: (database: SqliteDatabase) => ({
        identityLinks: createSqliteIdentityLinkStore(database),
        connections: createSqliteSsoConnectionStore(database),
      }),
    },
    postgres: {
      schema: identityLinkSchema,
      open: (client: SqlClient) => ({
        identityLinks: createPostgresIdentityLinkStore(client),
        connections: createPostgresSsoConnectionStore(client),
      }),
    },
  },
  scim: {
    sqlite: { schema: sqliteScimSchema, open: createSqliteScimStore },
    postgres: { schema: scimSchema, open: createPostgresScimStore },
  },
};

/** The session service's own routes, as metrics label them beside the session handler's (anything else is `other`). */
const routes = ['/healthz', '/readyz', '/metrics', '/openapi.json'];

/**
 * Builds the session service app: the embedded database in DATA_DIR (or Postgres with DATABASE_URL), the demo
 * directory, login throttles in process (or shared on Redis with REDIS_URL), routes.
 */
export async function createApp(config: ServerConfig, logger: Logger) {
  // First, and bounded: an unreachable Redis stops the start with a clear message within seconds,
  // before the database is opened (or created) for nothing.
  // The Redis client is loaded only when configured: it is ≈ 12 MiB of an idle process.
  const redisModule = config.REDIS_URL ? await import('@deskpilot/redis') : undefined;
  const redis = config.REDIS_URL ? await redisModule!.connectRedis({ url: config.REDIS_URL }) : undefined;
  const storage = await openStorage(config, 'session', moduleStorage).catch(async (error: unknown) => {
    await redis?.close();
    throw error;
  });
  const { sessionStore, userDirectory, sessionLookup } = storage;
  // Only the missing ones, with hashes computed once (see demo-seed.ts): a start runs no scrypt.
  if (config.SEED_DEMO_USERS)
    for (const user of seededDemoUsers)
      if (!(await userDirectory.findCredentials(user.email))) await userDirectory.addUser(user);

  await seedOrganizations(config, storage);

  const throttle = (prefix: string, limit: number, windowMs = 5 * 60 * 1000): RateLimiter | undefined =>
    redis &&
    redisModule!.createRedisRateLimiter({
      client: redis,
      prefix: `deskpilot:login:${prefix}:`,
      limit,
      windowMs,
    });

  const email = await emailSender(config);
  if (config.MAGIC_LINK && !email) {
    await storage.close();
    await redis?.close();
    throw new Error(
      'MAGIC_LINK=true needs email to send the links: set SMTP_URL (or EMAIL_CONSOLE=true in development).',
    );
  }
  const sessions = createSessionService({
    store: sessionStore,
    directory: userDirectory,
    // One statement per request on Postgres: the session and its account together.
    lookup: sessionLookup,
    cookie: { prefix: config.COOKIE_PREFIX, secure: config.COOKIE_SECURE },
    idleTimeoutMs: config.SESSION_IDLE_TIMEOUT_MS,
    absoluteTimeoutMs: config.SESSION_ABSOLUTE_TIMEOUT_MS,
    pepper: config.SESSION_PEPPER,
    // A flood of sign-ins waits behind a short queue, or is refused at once, never queued without bound.
    hashGate:
      config.LOGIN_HASH_CONCURRENCY === 0
        ? false
        : createHashGate({ maxInFlight: config.LOGIN_HASH_CONCURRENCY, maxQueued: config.LOGIN_HASH_QUEUE }),
    // Renewals are written after their reads are answered: a failed one is logged, the next read renews.
    logger: coreLogger(logger),
    // Every sign-in and team change lands in the project's hash-chained trail, in the same database.
    audit: storage.auditStore,
    ...(config.AUDIT_RETENTION_DAYS === undefined
      ? {}
      : { auditRetentionMs: config.AUDIT_RETENTION_DAYS * 24 * 60 * 60 * 1000 }),
    // Admins manage their projects' members; invitations are emailed when email is configured, else the
    // token is answered once to the admin who invited (the studio shows the link to pass on).
    modules: [
      createTeamModule({
        directory: userDirectory,
        invitations: storage.invitationStore,
        // Each project's role → capability flags, editable by its admins; the studio builds chat grants from it.
        policies: storage.rolePolicyStore,
        organizations: storage.organizationStore,
        ...(config.CAPABILITIES
          ? {
              capabilities: defineCapabilities(
                Object.fromEntries(Object.entries(config.CAPABILITIES).map(([flag, kind]) => [flag, { kind }])),
              ),
            }
          : {}),
        invitationLink: studioPage(config, 'invitation'),
        ...(email ? { email: email.sender } : {}),
      }),
      // Password reset and email verification, when the server sends email. Its throttles are shared on
      // Redis too: per process, N replicas would send N times the links one account may get.
      ...(email
        ? [
            createRecoveryModule({
              ...recoveryOptions(config, storage.accountTokenStore, email.sender),
              throttle: {
                address: throttle('recovery-address', 30, 15 * 60 * 1000),
                account: throttle('recovery-account', 3, 15 * 60 * 1000),
              },
            }),
          ]
        : []),
      // Sign-in by a link sent by email, when asked for: it opens the studio, which posts the token back.
      ...(config.MAGIC_LINK && email
        ? [
            createMagicLinkModule({
              tokens: storage.accountTokenStore,
              email: email.sender,
              link: studioPage(config, 'magic-link'),
              throttle: throttle('magic-link-account', 5, 15 * 60 * 1000),
            }),
          ]
        : []),
      // The studio's page runs the ceremonies: its domain is the relying party, its origins the allowed ones.
      ...(config.PASSKEYS
        ? [
            createPasskeysModule({
              store: storage.modules.passkeys,
              challenges: storage.accountTokenStore,
              rpId: config.PASSKEY_RP_ID ?? new URL(config.APP_URL).hostname,
              origins: config.ALLOWED_ORIGINS,
              // A passkey added or removed is news to its owner, by email when the server sends any.
              ...(email ? { email: email.sender } : {}),
            }),
          ]
        : []),
      ...(config.SSO_PROVIDERS || config.SSO_CONNECTION_KEYS
        ? [
            createSsoModule({
              providers: config.SSO_PROVIDERS ? tenantProviders(config) : [],
              // Through the studio, which forwards /sessions/* here: the provider sees the studio's origin.
              redirectUri: config.SSO_REDIRECT_URI ?? new URL('/sessions/sso/callback', config.APP_URL).href,
              landingUrl: config.APP_URL,
              allowInsecureRequests: config.SSO_ALLOW_HTTP,
              requestTimeoutMs: config.SSO_REQUEST_TIMEOUT_MS,
              callbackTimeoutMs: config.SSO_CALLBACK_TIMEOUT_MS,
              addUser: (user: NewUser) => userDirectory.addUser(user),
              identityLinks: storage.modules.sso.identityLinks,
              // Organisations' own connections, for the domains ORGANIZATIONS lists for each.
              ...(config.SSO_CONNECTION_KEYS
                ? {
                    connections: {
                      store: storage.modules.sso.connections,
                      secrets: createSecretBox({ keys: config.SSO_CONNECTION_KEYS }),
                      domains: (organization: string) => config.ORGANIZATIONS?.[organization]?.domains ?? [],
                      // A connection's roles (its groups claim → project roles) are written here at each sign-in;
                      // someone the organisation's SCIM directory deprovisioned gets none back.
                      memberships: userDirectory,
                      ...(config.SCIM
                        ? {
                            deprovisioned: async (organization: string, userId: string) =>
                              (await storage.modules.scim.userByAccount(organization, userId))?.active === false,
                          }
                        : {}),
                    },
                  }
                : {}),
            }),
          ]
        : []),
      // Organisations' directories push their users and groups (`/scim/v2`, mounted below): for the
      // domains ORGANIZATIONS lists, roles through its groups, deactivation ending sessions at once.
      ...(config.SCIM
        ? [
            createScimModule({
              store: storage.modules.scim,
              directory: userDirectory,
              // A deprovisioned address's pending invitations to the organisation's projects go too.
              invitations: storage.invitationStore,
              domains: (organization: string) => config.ORGANIZATIONS?.[organization]?.domains ?? [],
              // ORGANIZATIONS' groups, then those of the organisation's enabled connections: one mapping
              // for its directory's groups and its provider's groups claim.
              groupRoles: async (organization: string) => [
                ...(config.ORGANIZATIONS?.[organization]?.groups ?? []),
                ...(config.SSO_CONNECTION_KEYS
                  ? (await storage.modules.sso.connections.listByOrganization(organization))
                      .filter((connection) => connection.enabled)
                      .flatMap((connection) => connection.settings.roles?.rules ?? [])
                  : []),
              ],
              baseUrl: config.SCIM_BASE_URL ?? `http://localhost:${config.PORT}/scim/v2`,
            }),
          ]
        : []),
      // Proofs that the user verified themselves just now, for the chat service's risky approvals (after
      // passkeys and single sign-on, which it uses).
      ...(config.STEP_UP_SECRET
        ? [createStepUpModule({ secret: config.STEP_UP_SECRET, recentSignInMs: config.STEP_UP_RECENT_SIGN_IN_MS })]
        : []),
    ],
  });
  if (email?.verify)
    email
      .verify()
      .catch((error: unknown) =>
        logger.warn(`the SMTP server does not answer yet (reset links wait for it): ${describeError(error)}`),
      );

  // Ready: the database answers at this release's schema version, and Redis answers when configured.
  const readiness = createReadinessCheck({
    checks: {
      session_store: () => storage.checkReady(),
      ...(redis ? { redis: () => redisModule!.checkRedisReady(redis) } : {}),
    },
    onCheckFailed: (name, error) => logger.warn({ check: name }, `not ready: ${name}: ${describeError(error)}`),
  });

  const app = express();
  app.disable('x-powered-by');
  app.use(requestLogging(logger));
  const metrics = await mountMetrics(app, config, {
    service: 'session-server',
    routeOf: routeLabels(() => [...routes, ...sessionHandler.paths]),
  });
  // Before the session routes: no cookie, no CORS, no rate limit for the probes.
  app.get('/healthz', (_req, res) => writeResponse(res, healthResponse()));
  app.get('/readyz', async (_req, res) => writeResponse(res, readinessResponse(await readiness())));
  // The contract, from the schemas the handler validates with (also committed under docs/openapi).
  // Built on the first request: the documents' module loads classic zod and the chat's request
  // schemas, which a session server needs for nothing else.
  let openApi: Promise<string> | undefined;
  app.get('/openapi.json', async (_req, res) => {
    openApi ??= import('@deskpilot/core/openapi').then(({ sessionOpenApi }) =>
      JSON.stringify(sessionOpenApi({ cookiePrefix: config.COOKIE_PREFIX, routes: sessionHandler.routes })),
    );
    res
      .type('application/json')
      .set('cache-control', 'no-cache')
      .send(await openApi);
  });
  const sessionHandler = createSessionHandler({
    service: sessions,
    allowedOrigins: config.ALLOWED_ORIGINS,
    trustedProxies: config.TRUSTED_PROXIES,
    loginThrottle: {
      address: throttle('address', 100),
      accountAddress: throttle('account-address', 10),
      account: throttle('account', 100),
    },
    logger: coreLogger(logger),
    onEvent: allListeners(logEvents(logger, createEmailHasher(config.LOG_EMAIL_HASH_KEY)), metrics?.onEvent),
  });
  app.use(sessionRouter(sessionHandler));
  const scim = (sessions.modules as { scim?: ScimModule }).scim;
  // The SCIM endpoint: its own bearer tokens, no cookie, no CORS (identity providers call it server to server).
  if (scim)
    app.use('/scim/v2', (req, res, next) => {
      scim
        .handle(fromNodeRequest(req, req.path, { clientAddress: req.ip }))
        .then((answer) => writeResponse(res, answer), next);
    });
  app.use((_req, res) =>
    writeResponse(res, problemResponse(new DeskpilotError('not_found', { detail: 'No such route.' }))),
  );
  const close = async () => {
    email?.close();
    await redis?.close();
    await storage.close();
  };
  return {
    app,
    sessions,
    readiness,
    metrics,
    storage: `${storage.label}${redis ? ', login throttles on Redis' : ''}${email ? `, ${email.label}` : ''}`,
    close,
  };
}

/** Where reset and verification links go: SMTP, the console in development, or nowhere (no recovery routes). */
async function emailSender(config: ServerConfig) {
  if (config.SMTP_URL) {
    // Loaded only when configured, like the Redis client.
    const { createSmtpEmailSender } = await import('@deskpilot/smtp');
    const sender = createSmtpEmailSender({ url: config.SMTP_URL, from: config.EMAIL_FROM });
    return { sender, label: 'recovery emails over SMTP', verify: () => sender.verify(), close: () => sender.close() };
  }
  if (config.EMAIL_CONSOLE)
    return { sender: createConsoleEmailSender(), label: 'recovery emails printed (EMAIL_CONSOLE)', close: () => {} };
  return undefined;
}

/** The demo's organisations: its companies, each over its projects. */
const demoOrganizations = {
  acme: { projects: ['acme-b2c', 'acme-b2b'], admins: [] },
  globex: { projects: ['globex-b2c'], admins: [] },
};

/** ORGANIZATIONS, or the demo's organisations when seeding demo users without it. */
const organizationsOf = (config: ServerConfig): Record<string, { projects: string[]; admins: string[] }> =>
  config.ORGANIZATIONS ?? (config.SEED_DEMO_USERS ? demoOrganizations : {});

/**
 * SSO_PROVIDERS as `createSsoModule` (@deskpilot/sso) takes them: a provider of an `organization` signs people into that
 * organisation's projects (ORGANIZATIONS) only. An organisation not configured stops the start.
 */
function tenantProviders(config: ServerConfig): SsoProvider[] {
  return (config.SSO_PROVIDERS ?? []).map(({ organization, ...provider }) => {
    if (organization === undefined) return provider;
    const projects = organizationsOf(config)[organization]?.projects;
    if (!projects || provider.projects)
      throw new Error(
        `SSO_PROVIDERS: provider ${provider.id} names the organisation ${organization}, which ${projects ? 'it gives projects too' : 'ORGANIZATIONS does not have'}`,
      );
    return { ...provider, projects };
  });
}

/**
 * Places ORGANIZATIONS' projects and, for an organisation with no admin yet, its first admins (by email,
 * once they have an account): from then on its admins appoint and remove admins themselves, and a
 * restart brings back no one they removed.
 */
async function seedOrganizations(config: ServerConfig, storage: Storage<Record<string, unknown>>): Promise<void> {
  for (const [organization, { projects, admins }] of Object.entries(organizationsOf(config))) {
    for (const projectKey of projects) await storage.organizationStore.addProject(organization, projectKey);
    if ((await storage.organizationStore.admins(organization)).length > 0) continue;
    for (const email of admins) {
      const user = await storage.userDirectory.findUserByEmail(normalizeEmail(email));
      if (user) await storage.organizationStore.setAdmin(organization, user.id, true);
    }
  }
}

/** Recovery over the service's own database, its links opening the studio's page (the token in the fragment). */
function recoveryOptions(
  config: ServerConfig,
  tokens: RecoveryModuleOptions['tokens'],
  email: RecoveryModuleOptions['email'],
): RecoveryModuleOptions {
  const page = (action: string) => studioPage(config, action);
  return { tokens, email, links: { passwordReset: page('reset-password'), emailVerification: page('verify-email') } };
}

/** A link to the studio's own page with `#<action>=<token>`, path kept (a studio under /desk/ gets /desk/#…). */
function studioPage(config: ServerConfig, action: string): (token: string) => string {
  return (token) => {
    const url = new URL(config.APP_URL);
    url.hash = `${action}=${token}`;
    return url.href;
  };
}
