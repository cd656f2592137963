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

const flag = z.enum(['true', 'false']).transform((value) => value === 'true');
const milliseconds = z.coerce.number().int().positive();

/** Environment of the reference session server (DESIGN §5). */
const environment = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4360),
  HOST: z.string().default('127.0.0.1'),
  /** pino's level for this process's JSON log lines (`silent`: none). */
  LOG_LEVEL: logLevel.default('info'),
  /** `json` lines, `pretty` colour lines for a person, or `auto`: pretty when stdout is a terminal. */
  LOG_FORMAT: logFormat.default('auto'),
  /** Key for the email hashes in sign-in log lines; unset, a random key per process (hashes match within one run only). */
  LOG_EMAIL_HASH_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  COOKIE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9-]{1,64}$/)
    .default('deskpilot'),
  COOKIE_SECURE: flag.default(true),
  /** Exact as given when set; unset (development), the studio's loopback origins (`localhost`, `127.0.0.1`, `[::1]`) on its default port. */
  ALLOWED_ORIGINS: originList.default(loopbackOrigins(studioDefaultPort)),
  TRUSTED_PROXIES: addressRangeList.default([]),
  SESSION_PEPPER: z.string().min(16).optional(),
  SESSION_IDLE_TIMEOUT_MS: milliseconds.default(2 * 60 * 60 * 1000),
  SESSION_ABSOLUTE_TIMEOUT_MS: milliseconds.default(12 * 60 * 60 * 1000),
  SEED_DEMO_USERS: flag.default(true),
  DATABASE_URL: postgresUrl.optional(),
  DATABASE_CONNECT_TIMEOUT_MS: milliseconds.default(5_000),
  DATABASE_QUERY_TIMEOUT_MS: milliseconds.default(10_000),
  /** The platform's data root: this service keeps its embedded database in `<DATA_DIR>/session`. */
  DATA_DIR: z.string().default('./.data'),
  /** The embedded database's buffer cache (Postgres's `shared_buffers`); more for a large embedded database. */
  PGLITE_SHARED_BUFFERS: z
    .string()
    .regex(/^\d+(kB|MB|GB)$/, 'expected a size such as 16MB')
    .default('16MB'),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  /** On SIGTERM or SIGINT, how long running requests may take to finish. */
  SHUTDOWN_GRACE_MS: milliseconds.default(10_000),
  ...metricsVariables,
  ...tracingVariables,
});

export type ServerConfig = z.infer<typeof environment>;

/** Reads the whole configuration; throws one readable message naming every bad variable (never its value). */
export function readConfig(env: Record<string, string | undefined>): ServerConfig {
  return readEnvironment(environment, env);
}
