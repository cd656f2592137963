import { toJSONSchema, type $ZodType } from 'zod/v4/core';
import { errorStatus, errorTitle, type ErrorCode } from '../errors/deskpilot-error.js';
import type { RouteAnswer, RouteAuth, RouteDeclaration, RouteHeader } from './declare-route.js';

/** The codes a route that reads a JSON body can answer before it runs. */
export const bodyErrors: readonly ErrorCode[] = [
  'invalid_request',
  'invalid_json',
  'payload_too_large',
  'unsupported_media_type',
];

/** A schema's JSON Schema: the input side for what a client sends, the output side for what it receives. */
export function jsonSchemaOf(schema: $ZodType, io: 'input' | 'output'): Record<string, unknown> {
  // The dialect is the document's (OpenAPI 3.1 is JSON Schema 2020-12): not repeated in every schema.
  const { $schema: _dialect, ...jsonSchema } = toJSONSchema(schema, { io, unrepresentable: 'any' });
  return jsonSchema;
}

/** The problem+json body, with every stable code. */
export function problemSchema(): Record<string, unknown> {
  return {
    type: 'object',
    required: ['type', 'title', 'status', 'code'],
    properties: {
      type: { type: 'string', description: '`urn:deskpilot:problem:<code>`' },
      title: { type: 'string' },
      status: { type: 'integer' },
      code: { type: 'string', enum: Object.keys(errorStatus) },
      detail: { type: 'string' },
      errors: {
        type: 'array',
        items: {
          type: 'object',
          required: ['path', 'message'],
          properties: { path: { type: 'string' }, message: { type: 'string' } },
        },
      },
      provider: {
        type: 'object',
        description:
          'For `sso_required`: the identity provider to sign in at (`GET /sessions/sso/start?provider=<id>`).',
        required: ['id', 'name'],
        properties: { id: { type: 'string' }, name: { type: 'string' } },
      },
      budget: {
        type: 'object',
        description: 'For `project_budget_exceeded` and `budget_unpriced`: the project’s budget that refused the turn.',
        required: ['period', 'kind'],
        properties: {
          period: { type: 'string', enum: ['day', 'month'] },
          kind: { type: 'string', enum: ['tokens', 'cost'] },
          limit: {
            type: 'number',
            description: 'Tokens, or an amount in `currency`: told to the project’s admins only.',
          },
          currency: { type: 'string', description: 'For a `cost` budget: ISO 4217.' },
        },
      },
    },
  };
}

/** The error answers of a route: one per status, each naming the codes it can carry (and `internal`). */
export function problemResponses(codes: readonly ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...codes, 'internal' as const]))
    byStatus.set(errorStatus[code], [...(byStatus.get(errorStatus[code]) ?? []), code]);
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      String(status),
      {
        description: list.map((code) => `\`${code}\`: ${errorTitle[code]}`).join('; '),
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      },
    ]),
  );
}

/** The documented response headers. */
export const responseHeaders: Record<RouteHeader, Record<string, unknown>> = {
  'set-cookie': {
    'Set-Cookie': {
      description:
        'The session cookie (HttpOnly, Secure unless configured off, SameSite=Lax); at sign-in also the device cookie (`<prefix>_device`).',
      schema: { type: 'string' },
    },
  },
  'retry-after': { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
  'rate-limit': { 'RateLimit-Policy': { schema: { type: 'string' } }, RateLimit: { schema: { type: 'string' } } },
  location: { Location: { description: 'Where the browser goes next.', schema: { type: 'string' } } },
  'ui-message-stream': { 'x-vercel-ai-ui-message-stream': { schema: { type: 'string', const: 'v1' } } },
};

/** Options of {@link openApiPaths}. */
export interface OpenApiPathsOptions {
  /** The `security` requirement of each kind of caller (`session`: the cookie scheme). */
  security?: Partial<Record<RouteAuth, Array<Record<string, string[]>>>>;
  /** The codes the handler itself answers a route with (CSRF refusals of writes, a missing session). */
  handlerErrors?: (route: RouteDeclaration) => readonly ErrorCode[];
}

/** The OpenAPI `paths` of declared routes: what a handler serves, as it serves it. */
export function openApiPaths(
  routes: readonly RouteDeclaration[],
  options: OpenApiPathsOptions = {},
): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const operation = openApiOperation(route, options);
    const openApiPath = route.path.replace(/:(\w+)/g, '{$1}');
    paths[openApiPath] = { ...paths[openApiPath], [route.method.toLowerCase()]: operation };
  }
  return paths;
}

function openApiOperation(route: RouteDeclaration, options: OpenApiPathsOptions): Record<string, unknown> {
  const security = options.security?.[route.auth];
  const parameters = [
    ...pathParameters(route.path),
    ...(route.query ? queryParameters(route.query) : []),
    ...Object.entries(route.requestHeaders ?? {}).map(([name, { description, maxLength }]) => ({
      name,
      in: 'header',
      required: false,
      description,
      schema: { type: 'string', maxLength },
    })),
  ];
  const codes = [
    ...(route.body ? bodyErrors : []),
    ...(route.query ? (['invalid_request'] as const) : []),
    ...(options.handlerErrors?.(route) ?? []),
    ...route.errors,
  ];
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(security ? { security } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: jsonSchemaOf(route.body, 'input') } },
          },
        }
      : {}),
    responses: {
      ...answerResponse(route.answer),
      ...(route.otherAnswer ? answerResponse(route.otherAnswer) : {}),
      ...problemResponses(codes),
    },
  };
}

/** A success answer as an OpenAPI response. */
function answerResponse(answer: RouteAnswer): Record<string, unknown> {
  const body = answer.schema
    ? answer.component
      ? { $ref: `#/components/schemas/${answer.component}` }
      : jsonSchemaOf(answer.schema, 'output')
    : undefined;
  const content = answer.contentType
    ? { [answer.contentType]: { schema: body ?? { type: 'string' } } }
    : body && { 'application/json': { schema: body } };
  const headers = Object.assign({}, ...(answer.headers ?? []).map((header) => responseHeaders[header]));
  return {
    [String(answer.status)]: {
      description: answer.description,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      ...(content ? { content } : {}),
    },
  };
}

function pathParameters(path: string) {
  return [...path.matchAll(/:(\w+)/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
}

function queryParameters(query: $ZodType) {
  const schema = jsonSchemaOf(query, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(schema.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: schema.required?.includes(name) ?? false,
    schema: property,
  }));
}
