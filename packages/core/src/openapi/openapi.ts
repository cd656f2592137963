import { chatRoutes } from '../chat/handler/chat-api.js';
import type { ErrorCode } from '../errors/deskpilot-error.js';
import { sessionSchema } from '../session/session-schema.js';
import { sessionRoutes } from '../session/session-api.js';
import { jsonSchemaOf, openApiPaths, problemSchema } from '../routes/route-open-api.js';
import type { RouteDeclaration } from '../routes/declare-route.js';
import { recoveryRoutes } from '../recovery/recovery-api.js';
import { stepUpRoutes } from '../step-up/step-up-api.js';
import { organizationRoutes, teamRoutes } from '../team/team-api.js';

/** An OpenAPI 3.1 document, as plain JSON. */
export type OpenApiDocument = Record<string, unknown> & { openapi: '3.1.0' };

/** Options of {@link sessionOpenApi} and {@link chatOpenApi}. */
export interface OpenApiOptions {
  /**
   * The routes to document: a handler's (`handler.routes`, the kernel's and its modules'), or
   * declarations of your own. @default the kernel's and those of core's own modules (recovery, step-up,
   * team and organisations); the modules of other packages (`@deskpilot/passkeys`, `@deskpilot/sso`)
   * export theirs (`passkeyRoutes`, `ssoRoutes`)
   */
  routes?: readonly RouteDeclaration[];
  /** Where the service is reached, e.g. `https://sessions.example.com`. @default none (relative) */
  serverUrl?: string;
  /** The cookie prefix (`<prefix>_session`). @default "deskpilot" */
  cookiePrefix?: string;
}

function document(
  title: string,
  description: string,
  options: OpenApiOptions,
  paths: object,
  components: object,
): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: { title, version: '1', description, license: { name: 'MIT', identifier: 'MIT' } },
    ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
    paths,
    components: {
      ...components,
      schemas: { Problem: problemSchema(), ...(components as { schemas?: object }).schemas },
    },
  };
}

/** What the session handler answers any route with: a write from a foreign origin, a route's missing session. */
function sessionHandlerErrors(route: RouteDeclaration): ErrorCode[] {
  return [
    ...(route.method === 'GET' ? [] : (['cross_site_request'] as const)),
    ...(route.auth === 'session' ? (['unauthenticated'] as const) : []),
  ];
}

/** The kernel's routes, then those of core's own modules, as declared: what {@link sessionOpenApi} documents by default. */
export const sessionRouteDeclarations: readonly RouteDeclaration[] = [
  sessionRoutes,
  recoveryRoutes,
  stepUpRoutes,
  teamRoutes,
  organizationRoutes,
].flatMap((group) => Object.values(group));

/** The session service's routes (`createSessionHandler`) as an OpenAPI 3.1 document, from the schemas the handler validates with. */
export function sessionOpenApi(options: OpenApiOptions = {}): OpenApiDocument {
  const cookie = [{ sessionCookie: [] }];
  const paths = openApiPaths(options.routes ?? sessionRouteDeclarations, {
    security: { session: cookie },
    handlerErrors: sessionHandlerErrors,
  });
  const components = {
    securitySchemes: {
      sessionCookie: { type: 'apiKey', in: 'cookie', name: `${options.cookiePrefix ?? 'deskpilot'}_session` },
    },
    schemas: { Session: jsonSchemaOf(sessionSchema, 'output') },
  };
  const description =
    'Sign-in, cookie sessions and the active project. State-changing requests must carry an allowed `Origin` (CSRF).';
  return document('Deskpilot session service', description, options, paths, components);
}

/** The chat's own routes, as declared: what {@link chatOpenApi} documents by default. */
export const chatRouteDeclarations: readonly RouteDeclaration[] = Object.values(chatRoutes);

/**
 * The chat service's routes (`createChatHandler`) as an OpenAPI 3.1 document, from the schemas the
 * handler validates with: `routes` a handler's (`handler.routes`, its modules' included), or the
 * chat's own by default.
 */
export function chatOpenApi(options: Omit<OpenApiOptions, 'cookiePrefix'> = {}): OpenApiDocument {
  const description =
    'Assistant chat. Identity comes from `context` (a signed `context.grant` when the service has a context secret) or from the host session (`resolveContext`).';
  const paths = openApiPaths(options.routes ?? chatRouteDeclarations);
  return document('Deskpilot chat service', description, options, paths, {});
}
