import * as z from 'zod/mini';
import {
  integer,
  logFormat,
  logLevel,
  matching,
  metricsVariables,
  port,
  readEnvironment,
  studioDefaultPort,
  tracingVariables,
} from '../../shared/environment.ts';

const url = z.url({ protocol: /^https?$/ });

/** Environment of the studio example (DESIGN §5). */
export const environment = z.object({
  PORT: z._default(port, studioDefaultPort),
  HOST: z._default(z.string(), '127.0.0.1'),
  /** pino's level for this process's JSON log lines (`silent`: none). */
  LOG_LEVEL: z._default(logLevel, 'info'),
  /** `json` lines, `pretty` colour lines for a person, or `auto`: pretty when stdout is a terminal. */
  LOG_FORMAT: z._default(logFormat, 'auto'),
  /** Where the studio server reaches the session service. */
  SESSION_SERVICE_URL: z._default(url, 'http://127.0.0.1:4360'),
  /** Where the browser reaches the chat service (the page posts to it directly). */
  CHAT_SERVICE_URL: z._default(url, 'http://localhost:8080'),
  /** The downstream data API; unset: the example's own demo API, started in this process on a loopback port. */
  DATA_API_URL: z.optional(url),
  COOKIE_PREFIX: z._default(matching(/^[A-Za-z0-9-]{1,64}$/), 'deskpilot'),
  /** Same secret as the chat service's: the studio then signs a short-lived grant for the page. */
  CHAT_CONTEXT_SECRET: z.optional(z.string().check(z.minLength(32, 'must be at least 32 characters'))),
  /** On SIGTERM or SIGINT, how long running requests may take to finish. */
  SHUTDOWN_GRACE_MS: z._default(integer(1), 10_000),
  ...metricsVariables,
  ...tracingVariables,
});

export type StudioConfig = z.infer<typeof environment>;

/** Reads the whole configuration; throws one readable message naming every bad variable (never its value). */
export function readConfig(env: Record<string, string | undefined>): StudioConfig {
  return readEnvironment(environment, env);
}
