import { createHash } from 'node:crypto';
import {
  createSlidingWindowLimiter,
  DeskpilotError,
  readJsonBody,
  retryAfterSeconds,
  type HttpRequest,
  type HttpResponse,
  type Logger,
  type RateLimiter,
} from '@deskpilot/core/session';
import type { ScimCaller, ScimDirectory } from './scim-directory.js';
import { patchOperations } from './scim-patching.js';
import {
  groupResource,
  listQuery,
  listResponse,
  resourceTypes,
  schemas,
  ScimProblem,
  schemaUrns,
  serviceProviderConfig,
  userResource,
} from './scim-resources.js';
import type { ScimStore } from './scim-store.js';

/** Options of the SCIM endpoint (`createScimModule({ … })`). */
export interface ScimHandlerOptions {
  /** The endpoint's absolute URL (`https://sessions.example.com/scim/v2`): resources' `meta.location`. @default from the request's Host */
  baseUrl?: string | undefined;
  /** Requests per token: a limiter, or its window. @default 600 requests per 60 s */
  rateLimit?: RateLimiter | { limit: number; windowMs: number } | undefined;
  /** Most resources in one page of a list. @default 100 */
  maxResults?: number | undefined;
  /** Largest request body. @default 1 MiB */
  maxBodyBytes?: number | undefined;
}

/** SHA-256 of a token, base64url: the only form a token is kept in. */
export const tokenDigest = (token: string) => createHash('sha256').update(token).digest('base64url');

const contentType: [string, string] = ['content-type', 'application/scim+json; charset=utf-8'];
const noStore: [string, string] = ['cache-control', 'no-store'];

const answer = (status: number, value: unknown, headers: Array<[string, string]> = []): HttpResponse => ({
  status,
  headers: [contentType, noStore, ...headers],
  body: value === undefined ? null : JSON.stringify(value),
});

/** A refusal in SCIM's error schema (RFC 7644 §3.12). */
function problem(error: ScimProblem): HttpResponse {
  return answer(
    error.status,
    {
      schemas: [schemaUrns.error],
      status: String(error.status),
      ...(error.scimType ? { scimType: error.scimType } : {}),
      detail: error.message,
    },
    error.headers,
  );
}

/** The core's refusals of a body, as SCIM says them. */
function fromCore(error: DeskpilotError): ScimProblem {
  const detail = error.detail ?? error.message;
  if (error.code === 'unsupported_media_type')
    return new ScimProblem(415, 'The body must be application/scim+json or application/json.');
  if (error.code === 'payload_too_large') return new ScimProblem(413, detail);
  if (error.code === 'invalid_json') return new ScimProblem(400, detail, 'invalidSyntax');
  if (error.code === 'invalid_request')
    return new ScimProblem(400, 'The body holds text no resource may hold.', 'invalidValue');
  if (error.code === 'store_unavailable') return new ScimProblem(503, 'The directory is unavailable: try again.');
  return new ScimProblem(500, 'The request could not be served.');
}

/** A request whose SCIM media type reads as JSON for the core's body reader. */
const asJson = (request: HttpRequest): HttpRequest => ({
  ...request,
  headers: {
    get: (name) => {
      const value = request.headers.get(name);
      if (name.toLowerCase() !== 'content-type' || value === null) return value;
      return value.replace(/^\s*application\/scim\+json/i, 'application/json');
    },
  },
});

/** What the resources' routes use. */
interface Served {
  store: ScimStore;
  scim: ScimDirectory;
  body: (request: HttpRequest) => Promise<unknown>;
  maxResults: number;
}

/** A request on `/Users` or `/Groups`, authenticated, as the routes read it. */
interface ResourceRequest {
  request: HttpRequest;
  method: string;
  /** The resource's id, when the path names one. */
  id: string | undefined;
  by: ScimCaller;
  /** The endpoint's absolute URL, for `meta.location`. */
  base: string;
  search: URLSearchParams;
}

/** `/Users` and `/Users/{id}`. */
async function users(
  { store, scim, body, maxResults }: Served,
  { request, method, id, by, base, search }: ResourceRequest,
): Promise<HttpResponse> {
  if (!id && method === 'GET') {
    const query = listQuery(search, 'Users', maxResults);
    const page = await store.listUsers(by.organization, query);
    return answer(
      200,
      listResponse(
        page.total,
        query.startIndex,
        page.resources.map((user) => userResource(user, base)),
      ),
    );
  }
  if (!id && method === 'POST') {
    const user = await scim.createUser(by, await body(request));
    const resource = userResource(user, base);
    return answer(201, resource, [['location', resource.meta.location]]);
  }
  if (!id) throw new ScimProblem(405, `${method} is not served on /Users.`);
  if (method === 'GET') {
    const user = await store.getUser(by.organization, id);
    if (!user) throw new ScimProblem(404, `User ${id} not found.`);
    return answer(200, userResource(user, base));
  }
  if (method === 'PUT') return answer(200, userResource(await scim.replaceUser(by, id, await body(request)), base));
  if (method === 'PATCH')
    return answer(200, userResource(await scim.patchUser(by, id, patchOperations(await body(request))), base));
  if (method === 'DELETE') return (await scim.deleteUser(by, id), answer(204, undefined));
  throw new ScimProblem(405, `${method} is not served on /Users/{id}.`);
}

/** `/Groups` and `/Groups/{id}`. */
async function groups(
  { store, scim, body, maxResults }: Served,
  { request, method, id, by, base, search }: ResourceRequest,
): Promise<HttpResponse> {
  const withMembers = !/(^|,)\s*members\s*(,|$)/i.test(search.get('excludedAttributes') ?? '');
  const resource = async (group: Parameters<typeof groupResource>[0]) =>
    groupResource(group, withMembers ? await store.members(by.organization, group.id) : undefined, base);
  if (!id && method === 'GET') {
    const query = listQuery(search, 'Groups', maxResults);
    const page = await store.listGroups(by.organization, query);
    const resources = [];
    for (const group of page.resources) resources.push(await resource(group));
    return answer(200, listResponse(page.total, query.startIndex, resources));
  }
  if (!id && method === 'POST') {
    const created = await resource(await scim.createGroup(by, await body(request)));
    return answer(201, created, [['location', created.meta.location]]);
  }
  if (!id) throw new ScimProblem(405, `${method} is not served on /Groups.`);
  if (method === 'GET') {
    const group = await store.getGroup(by.organization, id);
    if (!group) throw new ScimProblem(404, `Group ${id} not found.`);
    return answer(200, await resource(group));
  }
  if (method === 'PUT') return answer(200, await resource(await scim.replaceGroup(by, id, await body(request))));
  if (method === 'PATCH') {
    const group = await scim.patchGroup(by, id, patchOperations(await body(request)));
    // What Entra ID and Okta expect of a PATCH of members: 204, or the group when asked for attributes.
    return search.has('attributes') ? answer(200, await resource(group)) : answer(204, undefined);
  }
  if (method === 'DELETE') return (await scim.deleteGroup(by, id), answer(204, undefined));
  throw new ScimProblem(405, `${method} is not served on /Groups/{id}.`);
}

/**
 * The `/scim/v2` endpoint of an organisation's directory: bearer tokens (looked up by digest),
 * a rate limit per token, Users and Groups, and the discovery documents; every refusal in SCIM's
 * error schema. Paths are relative to where it is mounted.
 */
export function createScimHandler(
  store: ScimStore,
  scim: ScimDirectory,
  options: ScimHandlerOptions,
  clock: { now(): number; logger: Logger },
) {
  const maxResults = options.maxResults ?? 100;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const limiter: RateLimiter =
    options.rateLimit && 'check' in options.rateLimit
      ? options.rateLimit
      : createSlidingWindowLimiter({ limit: 600, windowMs: 60_000, ...options.rateLimit });

  async function authenticate(request: HttpRequest): Promise<ScimCaller> {
    const header = request.headers.get('authorization') ?? '';
    const match = /^Bearer\s+([A-Za-z0-9._~+/-]{20,200}=*)\s*$/i.exec(header);
    const token = match && (await store.tokenByHash(tokenDigest(match[1]!)));
    if (!token)
      throw new ScimProblem(401, 'A valid bearer token is required.', undefined, [
        ['www-authenticate', 'Bearer realm="scim"'],
      ]);
    const decision = await limiter.check(token.id);
    if (!decision.allowed)
      throw new ScimProblem(429, 'Too many requests with this token: slow down.', undefined, [
        ['retry-after', String(retryAfterSeconds(decision))],
      ]);
    // The directory's last sync, at most once a minute per token.
    const at = clock.now();
    if (token.lastUsedAt === null || at - token.lastUsedAt > 60_000)
      store
        .tokenUsed(token.id, at)
        .catch((error: unknown) => clock.logger.warn("a SCIM token's last use was not noted", error));
    return { organization: token.organization, tokenId: token.id };
  }

  const body = async (request: HttpRequest) => {
    try {
      return await readJsonBody(asJson(request), maxBodyBytes);
    } catch (error) {
      if (DeskpilotError.isInstance(error)) throw fromCore(error);
      throw error;
    }
  };

  async function route(request: HttpRequest, base: string): Promise<HttpResponse> {
    const search = new URLSearchParams(request.search ?? '');
    let segments: string[];
    try {
      segments = request.path.replace(/\/+$/, '').split('/').filter(Boolean).map(decodeURIComponent);
    } catch {
      throw new ScimProblem(404, 'No such endpoint.');
    }
    const [collection, id, ...rest] = segments;
    const method = request.method.toUpperCase();
    if (collection === 'ServiceProviderConfig' && !id && method === 'GET')
      return answer(200, serviceProviderConfig(base, maxResults));
    if (collection === 'ResourceTypes' && method === 'GET' && rest.length === 0) {
      const types = resourceTypes(base);
      if (!id) return answer(200, listResponse(types.length, 1, types));
      const type = types.find((candidate) => candidate.id === id);
      if (!type) throw new ScimProblem(404, `No resource type ${id}.`);
      return answer(200, type);
    }
    if (collection === 'Schemas' && method === 'GET' && rest.length === 0) {
      const all = schemas(base);
      if (!id) return answer(200, listResponse(all.length, 1, all));
      const schema = all.find((candidate) => candidate.id === id);
      if (!schema) throw new ScimProblem(404, `No schema ${id}.`);
      return answer(200, schema);
    }
    if ((collection !== 'Users' && collection !== 'Groups') || rest.length > 0)
      throw new ScimProblem(404, 'No such endpoint.');
    const by = await authenticate(request);
    const served: Served = { store, scim, body, maxResults };
    return (collection === 'Users' ? users : groups)(served, { request, method, id, by, base, search });
  }

  return async function handle(request: HttpRequest): Promise<HttpResponse> {
    const base =
      options.baseUrl?.replace(/\/+$/, '') ?? `https://${request.headers.get('host') ?? 'localhost'}/scim/v2`;
    try {
      return await route(request, base);
    } catch (error) {
      if (error instanceof ScimProblem) return problem(error);
      if (DeskpilotError.isInstance(error)) return problem(fromCore(error));
      clock.logger.error('the SCIM endpoint failed', error);
      return problem(new ScimProblem(500, 'The request could not be served.'));
    }
  };
}
