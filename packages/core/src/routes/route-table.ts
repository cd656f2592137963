import type { $ZodType, output } from 'zod/v4/core';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import type { HttpRequest, HttpResponse } from '../http/http-request.js';
import { readJsonBody } from '../http/read-json-body.js';
import { inSpan } from '../telemetry/spans.js';
import { parseWithSchema } from '../validation/parse-with-schema.js';
import type { RouteDeclaration } from './declare-route.js';

/** A request's input, read through the route's declared schemas only. */
export interface RouteRequestInput<Route extends RouteDeclaration> {
  /** The body, read under the handler's limits and validated with the route's `body` schema. */
  body: Route['body'] extends $ZodType ? () => Promise<output<Route['body']>> : never;
  /** The query string, validated with the route's `query` schema. */
  query: Route['query'] extends $ZodType ? () => output<Route['query']> : never;
}

/** A declared route and the function that serves it over the dependencies `Deps`. */
export interface ServedRoute<Deps> {
  readonly declaration: RouteDeclaration;
  /** The span's name (`<service>.<name>`). @default the `operationId` in snake case */
  readonly spanName?: string | undefined;
  /**
   * The schema the body is read with when the handler's options set its limits (the most messages of
   * a chat request): the declared one, with the configured bounds. @default the declared `body`
   */
  readonly configuredBody?: ((deps: Deps) => $ZodType) | undefined;
  serve(deps: Deps, request: HttpRequest, input: RouteRequestInput<RouteDeclaration>): Promise<HttpResponse>;
}

/** Options of {@link serveRoute}. */
export interface ServeRouteOptions<Deps> {
  /** The span's name (`<service>.<name>`). @default the `operationId` in snake case */
  spanName?: string;
  /** The body's schema with the handler's configured bounds (see {@link ServedRoute.configuredBody}). */
  configuredBody?: (deps: Deps) => $ZodType;
}

/** Binds a declared route to the function that serves it. */
export function serveRoute<const Route extends RouteDeclaration, Deps>(
  declaration: Route,
  serve: (deps: Deps, request: HttpRequest, input: RouteRequestInput<Route>) => Promise<HttpResponse>,
  options: ServeRouteOptions<Deps> = {},
): ServedRoute<Deps> {
  return {
    declaration,
    spanName: options.spanName,
    configuredBody: options.configuredBody,
    serve: serve as ServedRoute<Deps>['serve'],
  };
}

/** Options of {@link createRouteTable}. */
export interface RouteTableOptions {
  /** The spans' prefix (`deskpilot.session`); absent, a route runs in no span of the table's. */
  spanPrefix?: string | undefined;
  /** Largest body a route reads. */
  maxBodyBytes: number;
  /** Deepest nesting of a body. @default 64 */
  maxBodyDepth?: number | undefined;
  /**
   * The refusal of a request that lacks the credential its route's declared `auth` asks for (the
   * session handler: a route declared `session` called without a session cookie), answered before the
   * body is read; a request that has one is judged by its route (the cookie may be stale).
   */
  refuseUncredentialed?: ((route: RouteDeclaration, request: HttpRequest) => DeskpilotError | undefined) | undefined;
}

/** A served route with its dependencies bound: what a route table dispatches to. */
export interface BoundRoute {
  readonly declaration: RouteDeclaration;
  readonly spanName?: string | undefined;
  /** The schema the body is read with: the declared one, or its configured variant. */
  readonly body?: $ZodType | undefined;
  serve(request: HttpRequest, input: RouteRequestInput<RouteDeclaration>): Promise<HttpResponse>;
}

/** Binds served routes to the dependencies they run on. */
export function bindRoutes<Deps>(routes: ReadonlyArray<ServedRoute<Deps>>, deps: Deps): BoundRoute[] {
  return routes.map((route) => ({
    declaration: route.declaration,
    spanName: route.spanName,
    body: route.configuredBody?.(deps) ?? route.declaration.body,
    serve: (request, input) => route.serve(deps, request, input),
  }));
}

/** A request's action: the served route with its dependencies bound. */
export type RouteAction = (request: HttpRequest) => Promise<HttpResponse>;

/** The routes of a handler by path and method, derived from their declarations. */
export interface RouteTable {
  /** The declared routes, in the order given. */
  readonly routes: readonly RouteDeclaration[];
  /** The distinct paths served. */
  readonly paths: readonly string[];
  /** The action for `method` on `path`; throws `not_found`, or `method_not_allowed` with `Allow`. */
  find(method: string, path: string): RouteAction;
  /** Whether some route is served at `path`. */
  has(path: string): boolean;
}

/** A path with `:name` segments as a pattern: each parameter one segment, never a `/`. */
function pathPattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, '(?<$1>[^/]+)');
  return new RegExp(`^${escaped}$`);
}

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/**
 * The dispatch of a handler, derived from its routes' declarations: each request's body and query are
 * read only through the declared schemas, each route runs in a span. Refuses, when it is created, two
 * routes with one `operationId` or one method and path.
 */
export function createRouteTable(routes: readonly BoundRoute[], options: RouteTableOptions): RouteTable {
  const byPath = new Map<string, Map<string, RouteAction>>();
  const patterns: Array<[RegExp, string]> = [];
  const operations = new Set<string>();
  for (const route of routes) {
    const { declaration } = route;
    if (operations.has(declaration.operationId))
      throw new TypeError(`Two routes are declared as ${declaration.operationId}.`);
    operations.add(declaration.operationId);
    const methods = byPath.get(declaration.path) ?? new Map<string, RouteAction>();
    if (methods.has(declaration.method))
      throw new TypeError(`Two routes are declared for ${declaration.method} ${declaration.path}.`);
    methods.set(declaration.method, actionOf(route, options));
    if (!byPath.has(declaration.path) && declaration.path.includes(':'))
      patterns.push([pathPattern(declaration.path), declaration.path]);
    byPath.set(declaration.path, methods);
  }
  const routeOf = (path: string) =>
    byPath.get(path) ?? byPath.get(patterns.find(([pattern]) => pattern.test(path))?.[1] ?? '');
  return {
    routes: routes.map((route) => route.declaration),
    paths: [...byPath.keys()],
    has: (path) => routeOf(path) !== undefined,
    find(method, path) {
      const methods = routeOf(path);
      if (!methods) throw new DeskpilotError('not_found', { detail: 'No such route.' });
      const action = methods.get(method);
      if (action) return action;
      throw new DeskpilotError('method_not_allowed', {
        detail: `${method} is not supported here.`,
        headers: { allow: [...methods.keys()].join(', ') },
      });
    },
  };
}

function actionOf(route: BoundRoute, options: RouteTableOptions): RouteAction {
  const { declaration } = route;
  const spanName =
    options.spanPrefix === undefined
      ? undefined
      : `${options.spanPrefix}.${route.spanName ?? snakeCase(declaration.operationId)}`;
  const undeclared = (what: string) => () => {
    throw new TypeError(`${declaration.operationId} reads a ${what} it does not declare.`);
  };
  return (request) => {
    const refusal = options.refuseUncredentialed?.(declaration, request);
    if (refusal) return Promise.reject(refusal);
    const bodySchema = route.body;
    const querySchema = declaration.query;
    const input = {
      body: bodySchema
        ? async () =>
            parseWithSchema(
              bodySchema,
              await readJsonBody(request, options.maxBodyBytes, { maxDepth: options.maxBodyDepth }),
            )
        : undeclared('body'),
      query: querySchema
        ? () =>
            parseWithSchema(
              querySchema,
              Object.fromEntries(new URLSearchParams(request.search ?? '')),
              'The query is invalid.',
            )
        : undeclared('query'),
    } as RouteRequestInput<RouteDeclaration>;
    if (spanName === undefined) return route.serve(request, input);
    return inSpan(spanName, {}, async (span) => {
      const response = await route.serve(request, input);
      span.setAttribute('http.response.status_code', response.status);
      return response;
    });
  };
}
