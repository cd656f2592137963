// Shared by the three reference servers' `config.ts`: the studio's development origins, the list
// types, and reading a whole environment with every problem reported at once. On zod's mini flavour,
// like the session routes: the session server never loads classic zod.
import { isIP } from 'node:net';
import * as z from 'zod/mini';
import english from 'zod/v4/locales/en.js';

/** The studio's port unless `PORT` says otherwise; the services' default allow-lists follow it. */
export const studioDefaultPort = 3000;

/**
 * The origins of a studio on this machine at `port`: a browser treats `localhost`, `127.0.0.1` and
 * `[::1]` as three origins, and the studio prints `127.0.0.1`, so development defaults list all three.
 */
export function loopbackOrigins(port: number): string[] {
  return ['localhost', '127.0.0.1', '[::1]'].map((host) => `http://${host}:${port}`);
}

/** A comma-separated list; blanks between commas are dropped. */
export const commaList = z.pipe(
  z.string(),
  z.transform((value: string) =>
    value
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean),
  ),
);

/** A whole number written in the environment, from `min` to `max`. */
export const integer = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.pipe(z.coerce.number(), z.int().check(z.minimum(min), z.maximum(max)));

/** A port number (0: any free port). */
export const port = integer(0, 65535);

/** A string with a pattern, refused with `message`. */
export const matching = (pattern: RegExp, message?: string) => z.string().check(z.regex(pattern, message));

/** `scheme://host[:port]` over http(s), nothing after: what a browser sends in `Origin`. */
function isOrigin(entry: string): boolean {
  if (!URL.canParse(entry)) return false;
  const url = new URL(entry);
  return /^https?:$/.test(url.protocol) && url.pathname === '/' && !/[?#@]/.test(entry);
}

/** An address or CIDR range, as the core's trusted-proxy rule reads them (`10.0.0.0/8`, `::1`). */
function isAddressRange(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

/** A comma-separated list of origins (an allow-list). */
export const originList = z.pipe(
  commaList,
  z.array(z.string().check(z.refine(isOrigin, 'not an origin (http[s]://host[:port], no path)'))),
);

/** A comma-separated list of addresses or CIDR ranges (trusted proxies). */
export const addressRangeList = z.pipe(
  commaList,
  z.array(z.string().check(z.refine(isAddressRange, 'not an IP address or CIDR range'))),
);

/** `LOG_LEVEL`: pino's levels; `silent` writes nothing. */
export const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** `LOG_FORMAT`: JSON lines, readable lines, or readable only when stdout is a terminal. */
export const logFormat = z.enum(['auto', 'json', 'pretty']);

/** `true`/`false`, or `1`/`0`. */
const onOff = z.pipe(
  z.enum(['true', 'false', '1', '0']),
  z.transform((value: 'true' | 'false' | '1' | '0') => value === 'true' || value === '1'),
);

/** Text that parses as JSON (the value is never echoed: it holds client secrets). */
export const json = z.pipe(
  z.string(),
  z.transform((text, context) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      context.issues.push({ code: 'custom', message: 'not JSON', input: '' });
      return z.NEVER;
    }
  }),
);
/** `true` or `false`. */
export const flag = z.pipe(
  z.enum(['true', 'false']),
  z.transform((value: 'true' | 'false') => value === 'true'),
);

/** The metrics variables every server reads: on the main port with `METRICS`, or on a port of their own. */
export const metricsVariables = {
  /** Serve `GET /metrics` (Prometheus text) on the main port. */
  METRICS: z._default(onOff, false),
  /** Serve `GET /metrics` on this port instead, and only there (metrics on even without `METRICS`). */
  METRICS_PORT: z.optional(port),
  /** Address of the `METRICS_PORT` listener. */
  METRICS_HOST: z._default(z.string(), '127.0.0.1'),
  /**
   * The projects the model tokens and cost series name (a `project` label; any other is `other`):
   * a label set the operator bounds. Unset: those series have no `project` label.
   */
  METRICS_PROJECTS: z.optional(commaList),
};

/** The OpenTelemetry variables every server checks (the SDK reads the rest itself): tracing is on when an endpoint is set. */
export const tracingVariables = {
  OTEL_EXPORTER_OTLP_ENDPOINT: z.optional(z.url({ protocol: /^https?$/ })),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.optional(z.url({ protocol: /^https?$/ })),
  OTEL_SERVICE_NAME: z.optional(z.string().check(z.minLength(1))),
};

/** A Postgres connection string (`postgres://` or `postgresql://`). */
export const postgresUrl = z
  .string()
  .check(
    z.refine(
      (value) => URL.canParse(value) && /^postgres(ql)?:$/.test(new URL(value).protocol),
      'not a postgres:// or postgresql:// URL',
    ),
  );

/** The storage variables of the two services: Postgres or the embedded database, and Redis. */
export const storageVariables = {
  DATABASE_URL: z.optional(postgresUrl),
  /** The schema the tables live in (created when missing), as `deskpilot-migrate --schema`; default: the first of the connection's `search_path`. */
  DATABASE_SCHEMA: z.optional(
    matching(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'expected a plain identifier (letters, digits, _; at most 63)'),
  ),
  DATABASE_CONNECT_TIMEOUT_MS: z._default(integer(1), 5_000),
  DATABASE_QUERY_TIMEOUT_MS: z._default(integer(1), 10_000),
  /**
   * The platform's data root: the embedded SQLite database is `<DATA_DIR>/deskpilot.sqlite`, shared by
   * both services; with EMBEDDED_DATABASE=pglite each service keeps its own in `<DATA_DIR>/<service>`.
   */
  DATA_DIR: z._default(z.string(), './.data'),
  /** The database used without DATABASE_URL: `sqlite` (Node's built-in, a few MiB) or `pglite` (Postgres in WebAssembly). */
  EMBEDDED_DATABASE: z._default(z.enum(['sqlite', 'pglite']), 'sqlite'),
  /** PGlite's buffer cache (Postgres's `shared_buffers`); more for a large embedded database. */
  PGLITE_SHARED_BUFFERS: z._default(matching(/^\d+(kB|MB|GB)$/, 'expected a size such as 16MB'), '16MB'),
  REDIS_URL: z.optional(z.url({ protocol: /^rediss?$/ })),
};

/**
 * Reads `env` against `schema`; throws one message naming every bad variable (never its value, which
 * may be a secret), so a start fixes them all at once. An empty variable (`KEY=` in an env file) means unset.
 */
export function readEnvironment<Schema extends z.ZodMiniType>(
  schema: Schema,
  env: Record<string, string | undefined>,
): z.infer<Schema> {
  // English messages: zod's mini flavour loads no locale of its own.
  const result = schema.safeParse(Object.fromEntries(Object.entries(env).filter(([, value]) => value !== '')), {
    error: english().localeError,
  });
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const [variable, entry] = issue.path;
    return `  ${String(variable)}${typeof entry === 'number' ? ` (entry ${entry + 1})` : ''}: ${issue.message}`;
  });
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  throw new Error(`Invalid configuration (${count}); fix these variables and start again:\n${problems.join('\n')}`);
}
