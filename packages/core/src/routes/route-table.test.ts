import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import { jsonResponse, type HttpRequest } from '../http/http-request.js';
import { declareRoute, type RouteDeclaration } from './declare-route.js';
import { openApiPaths } from './route-open-api.js';
import { bindRoutes, createRouteTable, serveRoute } from './route-table.js';

const echo = declareRoute({
  operationId: 'echoName',
  method: 'POST',
  path: '/things',
  summary: 'Echo the name.',
  auth: 'none',
  body: z.strictObject({ name: z.string().check(z.minLength(1)) }),
  answer: { status: 200, description: 'The name.', schema: z.object({ name: z.string() }) },
  errors: ['conflict'],
});
const list = declareRoute({
  operationId: 'listThings',
  method: 'GET',
  path: '/things',
  summary: 'List the things.',
  auth: 'session',
  query: z.strictObject({ page: z.optional(z.string()) }),
  answer: { status: 200, description: 'The things.', schema: z.object({ page: z.nullable(z.string()) }) },
  errors: [],
});
const bare = declareRoute({
  operationId: 'bare',
  method: 'DELETE',
  path: '/things/:id',
  summary: 'No input.',
  auth: 'session',
  answer: { status: 204, description: 'Gone.' },
  errors: ['not_found'],
});

const routes = [
  serveRoute(echo, async (_deps: { calls: number }, _request, input) => jsonResponse(200, await input.body())),
  serveRoute(list, async (_deps: { calls: number }, _request, input) =>
    jsonResponse(200, { page: input.query().page ?? null }),
  ),
  // A route reading a body it never declared: refused before anything is read.
  serveRoute(bare, async (_deps: { calls: number }, _request, input) => {
    await (input as unknown as { body(): Promise<unknown> }).body();
    return { status: 204, headers: [], body: null };
  }),
];

function request(method: string, path: string, init: { body?: string; search?: string } = {}): HttpRequest {
  return {
    method,
    path,
    search: init.search ?? '',
    headers: new Headers(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    body: init.body === undefined ? null : [new TextEncoder().encode(init.body)],
  };
}

const table = createRouteTable(bindRoutes(routes, { calls: 0 }), { spanPrefix: 'test', maxBodyBytes: 64 });
const codeOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return DeskpilotError.isInstance(error) ? { code: error.code, headers: error.headers } : error;
  }
  return undefined;
};

describe('createRouteTable', () => {
  it('dispatches by path and method, and says which methods a path has', async () => {
    expect(table.paths).toEqual(['/things', '/things/:id']);
    expect(table.routes.map((route) => route.operationId)).toEqual(['echoName', 'listThings', 'bare']);
    expect(codeOf(() => table.find('GET', '/nothing'))).toMatchObject({ code: 'not_found' });
    expect(codeOf(() => table.find('PUT', '/things'))).toMatchObject({
      code: 'method_not_allowed',
      headers: { allow: 'POST, GET' },
    });
    // Own keys only: a method token such as `toString` never reaches Object.prototype.
    expect(codeOf(() => table.find('toString', '/things'))).toMatchObject({ code: 'method_not_allowed' });
    expect(codeOf(() => table.find('GET', 'constructor'))).toMatchObject({ code: 'not_found' });
  });

  it('reads the body only through its declared schema, under the limit', async () => {
    const ok = await table.find('POST', '/things')(request('POST', '/things', { body: '{"name":"a"}' }));
    expect(ok.body).toBe('{"name":"a"}');
    await expect(
      table.find('POST', '/things')(request('POST', '/things', { body: '{"name":""}' })),
    ).rejects.toMatchObject({ code: 'invalid_request', errors: [{ path: 'name' }] });
    const big = JSON.stringify({ name: 'x'.repeat(100) });
    await expect(table.find('POST', '/things')(request('POST', '/things', { body: big }))).rejects.toMatchObject({
      code: 'payload_too_large',
    });
    await expect(table.find('DELETE', '/things/:id')(request('DELETE', '/things/:id', { body: '{}' }))).rejects.toThrow(
      'bare reads a body it does not declare.',
    );
  });

  it('reads the query through its declared schema', async () => {
    const page = await table.find('GET', '/things')(request('GET', '/things', { search: '?page=2' }));
    expect(page.body).toBe('{"page":"2"}');
    await expect(table.find('GET', '/things')(request('GET', '/things', { search: '?other=1' }))).rejects.toMatchObject(
      {
        code: 'invalid_request',
        detail: 'The query is invalid.',
      },
    );
  });

  it('refuses two routes with one operationId, or one method and path', () => {
    const again = { ...echo, path: '/elsewhere' };
    expect(() =>
      createRouteTable(bindRoutes([routes[0]!, serveRoute(again, routes[0]!.serve)], deps), options),
    ).toThrow('Two routes are declared as echoName.');
    const samePlace = { ...echo, operationId: 'other' };
    expect(() =>
      createRouteTable(bindRoutes([routes[0]!, serveRoute(samePlace, routes[0]!.serve)], deps), options),
    ).toThrow('Two routes are declared for POST /things.');
  });
});

const options = { spanPrefix: 'test', maxBodyBytes: 64 };
const deps = { calls: 0 };

describe('openApiPaths', () => {
  it('derives each operation from its declaration: body, query, path parameters, answer and every code', () => {
    const paths = openApiPaths([echo, list, bare] as RouteDeclaration[], {
      security: { session: [{ cookie: [] }] },
      handlerErrors: (route) => (route.auth === 'session' ? ['unauthenticated'] : []),
    }) as Record<string, Record<string, { [key: string]: unknown; responses: Record<string, unknown> }>>;
    expect(Object.keys(paths)).toEqual(['/things', '/things/{id}']);
    const post = paths['/things']!.post!;
    expect(post.operationId).toBe('echoName');
    expect(post.security).toBeUndefined();
    expect(post.requestBody).toMatchObject({
      content: { 'application/json': { schema: { required: ['name'], additionalProperties: false } } },
    });
    // The body's codes, the route's own, and `internal`, by status.
    expect(Object.keys(post.responses).sort()).toEqual(['200', '400', '409', '413', '415', '500']);
    const get = paths['/things']!.get!;
    expect(get.security).toEqual([{ cookie: [] }]);
    expect(get.parameters).toEqual([{ name: 'page', in: 'query', required: false, schema: { type: 'string' } }]);
    expect(Object.keys(get.responses).sort()).toEqual(['200', '400', '401', '500']);
    const remove = paths['/things/{id}']!.delete!;
    expect(remove.parameters).toEqual([{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }]);
    expect(remove.responses['204']).toEqual({ description: 'Gone.' });
  });
});
