import type { RouteDeclaration, RouteInput, RouteOutput } from '@deskpilot/core/routes';

/** Per call: what `fetch` takes beside the route's input. */
export interface RouteCallInit {
  signal?: AbortSignal;
}

/**
 * A route's call, typed from its declaration: its input (body and query fields as one object) in, its
 * answer out. An input whose every field is optional (a body of `{}`) may be left out.
 */
export type RouteCall<Route extends RouteDeclaration> =
  unknown extends RouteInput<Route>
    ? (input?: undefined, init?: RouteCallInit) => Promise<RouteOutput<Route>>
    : Record<never, never> extends RouteInput<Route>
      ? (input?: RouteInput<Route>, init?: RouteCallInit) => Promise<RouteOutput<Route>>
      : (input: RouteInput<Route>, init?: RouteCallInit) => Promise<RouteOutput<Route>>;

/** The calls of a group of routes (a module's `…Routes`), by their operation ids. */
export type RouteCalls<Routes extends Record<string, RouteDeclaration>> = {
  readonly [Name in keyof Routes]: RouteCall<Routes[Name]>;
};

/** Sends a request to a service and answers its response, or throws the client's error for a failure. */
export type SendRequest = (url: string, init: RequestInit) => Promise<Response>;

/** The path and query of a call: `:name` segments and a `GET`'s query from the input's fields. */
export function routeUrl(route: RouteDeclaration, input: object | undefined): { url: string; rest: object } {
  const fields: Record<string, unknown> = { ...input };
  const path = route.path.replace(/:(\w+)/g, (_, name: string) => {
    const value = fields[name];
    delete fields[name];
    // A dot segment would be collapsed by the URL parser into another route's path.
    if (typeof value !== 'string' || value === '' || value === '.' || value === '..')
      throw new TypeError(`${route.operationId}: ${name} must be a non-empty string, not a dot segment`);
    return encodeURIComponent(value);
  });
  if (route.method === 'POST') return { url: path, rest: fields };
  // Only a write carries a body: a field of a DELETE would be dropped in silence.
  if (route.method !== 'GET' && Object.values(fields).some((value) => value !== undefined))
    throw new TypeError(`${route.operationId}: a ${route.method} takes no fields but its path's`);
  const query = new URLSearchParams(
    Object.entries(fields).flatMap(([name, value]) => (value === undefined ? [] : [[name, String(value)]])),
  ).toString();
  return { url: query === '' ? path : `${path}?${query}`, rest: {} };
}

/**
 * Calls a route as declared: its method and path, its input as the query of a `GET` or the JSON body
 * of a write, its JSON answer parsed, a declared text answer (CSV) as a string, nothing for an answer
 * without a body.
 */
export async function callRoute<Route extends RouteDeclaration>(
  send: SendRequest,
  baseUrl: string,
  route: Route,
  input?: object,
  init: RouteCallInit = {},
): Promise<RouteOutput<Route>> {
  const { url, rest } = routeUrl(route, input);
  const request: RequestInit = {
    method: route.method,
    ...(init.signal ? { signal: init.signal } : {}),
    // A write always carries JSON (`{}` at least): the session service's CSRF rule asks for it.
    ...(route.method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(rest) } : {}),
  };
  const response = await send(`${baseUrl}${url}`, request);
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('json')) return (await response.json()) as RouteOutput<Route>;
  // A route declared to answer text (a CSV export) answers it as a string.
  if (route.answer.contentType?.startsWith('text/') && route.answer.contentType !== 'text/event-stream')
    return (await response.text()) as RouteOutput<Route>;
  await response.body?.cancel();
  return undefined as RouteOutput<Route>;
}

/** Where a route's service is: how to send to it, and its base URL. */
export type RouteService = (route: RouteDeclaration) => { send: SendRequest; baseUrl: string };

/** The calls of a group of routes, each by its operation id, each to its route's service. */
export function routeCalls<Routes extends Record<string, RouteDeclaration>>(
  serviceOf: RouteService,
  routes: Routes,
): RouteCalls<Routes> {
  return Object.fromEntries(
    Object.entries(routes).map(([name, route]) => {
      const { send, baseUrl } = serviceOf(route);
      return [name, (input?: object, init?: RouteCallInit) => callRoute(send, baseUrl, route, input, init)];
    }),
  ) as unknown as RouteCalls<Routes>;
}
