import { z } from 'zod';
import {
  addressRangeList,
  logFormat,
  logLevel,
  loopbackOrigins,
  metricsVariables,
  originList,
  postgresUrl,
  readEnvironment,
  studioDefaultPort,
  tracingVariables,
} from '../../shared/environment.ts';

const positiveInt = z.coerce.number().int().positive();

/** Environment of the reference chat server (DESIGN §5). */
const environment = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('127.0.0.1'),
  /** pino's level for this process's JSON log lines (`silent`: none). */
  LOG_LEVEL: logLevel.default('info'),
  /** `json` lines, `pretty` colour lines for a person, or `auto`: pretty when stdout is a terminal. */
  LOG_FORMAT: logFormat.default('auto'),
  /** Exact as given when set; unset (development), the studio's loopback origins (`localhost`, `127.0.0.1`, `[::1]`) on its default port. */
  ALLOWED_ORIGINS: originList.default(loopbackOrigins(studioDefaultPort)),
  OPENAI_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  OPENAI_MODEL: z.string().min(1).default('gpt-5.4-mini'),
  ANTHROPIC_MODEL: z.string().min(1).default('claude-sonnet-4-6'),
  /** Another OpenAI-compatible endpoint (Azure, a proxy, Ollama/vLLM/LM Studio/LiteLLM with OPENAI_API_MODE=chat). */
  OPENAI_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Another Anthropic Messages endpoint (a proxy, a gateway). */
  ANTHROPIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** `responses` (OpenAI's Responses API) or `chat` (Chat Completions, what compatible servers speak). */
  OPENAI_API_MODE: z.enum(['responses', 'chat']).default('responses'),
  /** Longest a model may stay silent (before its first token or between two) before the turn fails. */
  MODEL_TIMEOUT_MS: positiveInt.default(60_000),
  /** Retries of a failed model call (429, 5xx) before the turn fails. */
  MODEL_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  /** Most characters of model input per call (instructions and messages); older turns are left out whole. */
  HISTORY_BUDGET_CHARS: positiveInt.default(200_000),
  /** Model tokens per user per window; unset, no budget. */
  TOKEN_BUDGET: positiveInt.optional(),
  TOKEN_BUDGET_WINDOW_MS: positiveInt.default(86_400_000),
  CHAT_CONTEXT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  RATE_LIMIT_MAX: positiveInt.default(20),
  RATE_LIMIT_WINDOW_MS: positiveInt.default(60_000),
  RATE_LIMIT_ADDRESS_MAX: z.coerce.number().int().min(0).optional(),
  TRUSTED_PROXIES: addressRangeList.default([]),
  STEP_BUDGET: positiveInt.max(50).default(6),
  DEMO_MODEL_DELAY_MS: z.coerce.number().int().min(0).max(1000).default(0),
  DATABASE_URL: postgresUrl.optional(),
  DATABASE_CONNECT_TIMEOUT_MS: positiveInt.default(5_000),
  DATABASE_QUERY_TIMEOUT_MS: positiveInt.default(10_000),
  /** The platform's data root: this service keeps its embedded database in `<DATA_DIR>/chat`. */
  DATA_DIR: z.string().default('./.data'),
  /** The embedded database's buffer cache (Postgres's `shared_buffers`); more for a large embedded database. */
  PGLITE_SHARED_BUFFERS: z
    .string()
    .regex(/^\d+(kB|MB|GB)$/, 'expected a size such as 16MB')
    .default('16MB'),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  /** On SIGTERM or SIGINT, how long running requests and chat turns may take to finish. */
  SHUTDOWN_GRACE_MS: positiveInt.default(10_000),
  ...metricsVariables,
  ...tracingVariables,
});

export type ServerConfig = z.infer<typeof environment>;

/** Reads the whole configuration; throws one readable message naming every bad variable (never its value). */
export function readConfig(env: Record<string, string | undefined>): ServerConfig {
  return readEnvironment(environment, env);
}
