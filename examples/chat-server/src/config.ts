import * as z from 'zod/mini';
import {
  addressRangeList,
  flag,
  integer,
  json,
  logFormat,
  logLevel,
  loopbackOrigins,
  matching,
  metricsVariables,
  originList,
  port,
  readEnvironment,
  storageVariables,
  studioDefaultPort,
  tracingVariables,
} from '../../shared/environment.ts';

const positiveInt = integer(1);

/** STEP_UP_POLICY: `tool` or `tool>amount`, comma-separated, into `stepUpPolicy`'s rules. */
const stepUpRules = z.pipe(
  z
    .string()
    .check(
      z.regex(
        /^\s*[A-Za-z][\w-]{0,63}(>\d{1,12})?(\s*,\s*[A-Za-z][\w-]{0,63}(>\d{1,12})?)*\s*$/,
        'expected tool names, each alone or with >amount in minor units: cancelOrder,refundOrder>10000',
      ),
    ),
  z.transform((value): Record<string, true | { amountAbove: number }> =>
    Object.fromEntries(
      value.split(',').map((entry) => {
        const [tool, amount] = entry.trim().split('>');
        return [tool!, amount === undefined ? true : { amountAbove: Number(amount) }];
      }),
    ),
  ),
);

const text = z.string().check(z.minLength(1), z.maxLength(2000));
const count = z.number().check(z.int(), z.positive());
/** One server of MCP_SERVERS (`McpServerConfig` of @deskpilot/mcp, which checks the rest at start). */
const mcpServer = z.strictObject({
  name: matching(/^[a-z][a-z0-9]{0,15}$/, 'a short lower-case name: [a-z][a-z0-9]{0,15}'),
  projects: z.union([z.literal('*'), z.array(text).check(z.minLength(1))]),
  url: z.optional(z.url({ protocol: /^https?$/ })),
  headers: z.optional(z.record(z.string(), z.string())),
  oauth: z.optional(
    z.strictObject({
      clientId: text,
      clientSecret: text,
      issuer: z.url({ protocol: /^https?$/ }),
      scope: z.optional(text),
    }),
  ),
  command: z.optional(text),
  args: z.optional(z.array(z.string())),
  env: z.optional(z.record(z.string(), z.string())),
  cwd: z.optional(text),
  allow: z.optional(z.array(text)),
  deny: z.optional(z.array(text)),
  capability: z.optional(text),
  tools: z.optional(
    z.record(z.string(), z.strictObject({ readOnly: z.optional(z.boolean()), capability: z.optional(text) })),
  ),
  timeoutMs: z.optional(count),
  connectTimeoutMs: z.optional(count),
  maxTools: z.optional(count),
  maxResultChars: z.optional(count),
  maxResponseBytes: z.optional(count),
  listTtlMs: z.optional(count),
});

/** Environment of the reference chat server (DESIGN §5). */
export const environment = z.object({
  PORT: z._default(port, 8080),
  HOST: z._default(z.string(), '127.0.0.1'),
  /** pino's level for this process's JSON log lines (`silent`: none). */
  LOG_LEVEL: z._default(logLevel, 'info'),
  /** `json` lines, `pretty` colour lines for a person, or `auto`: pretty when stdout is a terminal. */
  LOG_FORMAT: z._default(logFormat, 'auto'),
  /** Exact as given when set; unset (development), the studio's loopback origins (`localhost`, `127.0.0.1`, `[::1]`) on its default port. */
  ALLOWED_ORIGINS: z._default(originList, loopbackOrigins(studioDefaultPort)),
  OPENAI_API_KEY: z.optional(z.string().check(z.minLength(1))),
  ANTHROPIC_API_KEY: z.optional(z.string().check(z.minLength(1))),
  OPENAI_MODEL: z._default(z.string().check(z.minLength(1)), 'gpt-5.4-mini'),
  ANTHROPIC_MODEL: z._default(z.string().check(z.minLength(1)), 'claude-sonnet-4-6'),
  /** Another OpenAI-compatible endpoint (Azure, a proxy, Ollama/vLLM/LM Studio/LiteLLM with OPENAI_API_MODE=chat). */
  OPENAI_BASE_URL: z.optional(z.url({ protocol: /^https?$/ })),
  /** Another Anthropic Messages endpoint (a proxy, a gateway). */
  ANTHROPIC_BASE_URL: z.optional(z.url({ protocol: /^https?$/ })),
  /** `responses` (OpenAI's Responses API) or `chat` (Chat Completions, what compatible servers speak). */
  OPENAI_API_MODE: z._default(z.enum(['responses', 'chat']), 'responses'),
  /** Longest a model may stay silent (before its first token or between two) before the turn fails; the wait before a retry is not silence. */
  MODEL_TIMEOUT_MS: z._default(positiveInt, 60_000),
  /** Longest one model call may take, retries and their waits included; unset: no deadline. */
  MODEL_CALL_DEADLINE_MS: z.optional(positiveInt),
  /** Retries of a failed model call (429, 5xx) before the turn fails. */
  MODEL_MAX_RETRIES: z._default(integer(0, 10), 2),
  /** Most characters of model input per call (instructions and messages); older turns are left out whole. */
  HISTORY_BUDGET_CHARS: z._default(positiveInt, 200_000),
  /** Model tokens per user per window; unset, no budget. */
  TOKEN_BUDGET: z.optional(positiveInt),
  TOKEN_BUDGET_WINDOW_MS: z._default(positiveInt, 86_400_000),
  CHAT_CONTEXT_SECRET: z.optional(z.string().check(z.minLength(32, 'must be at least 32 characters'))),
  /**
   * Step-up for risky approvals: the secret the session service signs step-up proofs with (its
   * STEP_UP_SECRET). Set, approvals STEP_UP_POLICY names need a fresh user verification.
   */
  STEP_UP_SECRET: z.optional(z.string().check(z.minLength(32, 'must be at least 32 characters'))),
  /**
   * Which approvals need a step-up: comma-separated tool names, each alone (always) or with
   * `>amount` (above that many minor units), e.g. `cancelOrder,refundOrder>10000`.
   */
  STEP_UP_POLICY: z._default(stepUpRules, { cancelOrder: true, refundOrder: { amountAbove: 10_000 } }),
  RATE_LIMIT_MAX: z._default(positiveInt, 20),
  RATE_LIMIT_WINDOW_MS: z._default(positiveInt, 60_000),
  RATE_LIMIT_ADDRESS_MAX: z.optional(integer(0)),
  TRUSTED_PROXIES: z._default(addressRangeList, []),
  STEP_BUDGET: z._default(integer(1, 50), 6),
  /**
   * How new conversations are named: `model` (by the provider's model, one short call after the first
   * answer; the first words with the offline demo model), `first-words`, or `off`.
   */
  CONVERSATION_TITLES: z._default(z.enum(['model', 'first-words', 'off']), 'model'),
  /** Days an archived conversation (with no activity since) is kept before it is deleted; unset: kept. */
  ARCHIVED_RETENTION_DAYS: z.optional(integer(1, 36_500)),
  DEMO_MODEL_DELAY_MS: z._default(integer(0, 1000), 0),
  /**
   * MCP servers whose tools the chat offers, behind the capabilities and approval gate, as JSON:
   * `[{ "name": "kb", "url": "https://kb.internal/mcp", "projects": ["acme-b2c"], "tools": { "searchArticles": { "readOnly": true } } }]`
   * (headers, OAuth client credentials, allow/deny lists, timeouts and bounds as in @deskpilot/mcp).
   */
  MCP_SERVERS: z.optional(z.pipe(json, z.array(mcpServer))),
  /**
   * The operator's own model prices, per million tokens, as JSON, looked up before the maintained
   * catalogue (`@deskpilot/usage`): `{"openai:gpt-4o":{"inputPerMillion":2.5,"outputPerMillion":10,"asOf":"2026-11-01"}}`.
   */
  MODEL_PRICES: z.optional(
    z.pipe(
      json,
      z.record(
        text,
        z.strictObject({
          inputPerMillion: z.number().check(z.nonnegative()),
          outputPerMillion: z.number().check(z.nonnegative()),
          cachedInputPerMillion: z.optional(z.number().check(z.nonnegative())),
          cacheWriteInputPerMillion: z.optional(z.number().check(z.nonnegative())),
          currency: z.optional(matching(/^[A-Z]{3}$/, 'an ISO 4217 code: EUR')),
          asOf: matching(/^\d{4}-\d{2}-\d{2}$/, 'a date: YYYY-MM-DD'),
        }),
      ),
    ),
  ),
  /** Serve the chat's tools over MCP at `/mcp` to callers with a signed grant (needs CHAT_CONTEXT_SECRET). */
  MCP_ENDPOINT: z._default(flag, true),
  /**
   * `true` when the session service keeps its sessions, memberships and role policies in this
   * service's database — a SQLite file both open, as `npm start` runs them. Signed grants then end with
   * their session or their member's place in the project, and hold no flag the member's role lost since
   * (within 5 s). Always so on Postgres (DATABASE_URL); refused on PGlite, whose directory one process owns.
   */
  SHARED_SESSIONS: z._default(flag, false),
  /**
   * With REDIS_URL: how long a replica's lease on a running answer lives unrenewed — a reader on
   * another replica learns within about this long that the replica died (an `error` part, the turn
   * recorded aborted); and how long a re-attached reader waits for the next bytes before it is told.
   */
  RESUME_LEASE_MS: z._default(integer(100, 600_000), 5_000),
  RESUME_IDLE_TIMEOUT_MS: z._default(integer(1_000, 3_600_000), 120_000),
  /** On SIGTERM or SIGINT, how long running requests and chat turns may take to finish. */
  SHUTDOWN_GRACE_MS: z._default(positiveInt, 10_000),
  ...storageVariables,
  ...metricsVariables,
  ...tracingVariables,
});

export type ServerConfig = z.infer<typeof environment>;

/** Reads the whole configuration; throws one readable message naming every bad variable (never its value). */
export function readConfig(env: Record<string, string | undefined>): ServerConfig {
  return readEnvironment(environment, env);
}
