import {
  bindRoutes,
  jsonResponse,
  noSessionError,
  serveRoute,
  type SessionKernel,
  type SessionModule,
} from '@deskpilot/core/module';
import {
  DeskpilotError,
  fromFetchRequest,
  toFetchResponse,
  type HttpRequest,
  type HttpResponse,
} from '@deskpilot/core/session';
import { recordOrganizationChange, type OrganizationAdmins, type OrganizationCaller } from '@deskpilot/core/team';
import { base64url } from 'jose';
import { scimRoutes } from './scim-api.js';
import { createScimDirectory, type ScimDirectoryOptions } from './scim-directory.js';
import { createScimHandler, tokenDigest, type ScimHandlerOptions } from './scim-handler.js';
import type { ScimTokenRecord } from './scim-store.js';

/** Options of {@link createScimModule}. */
export interface ScimModuleOptions extends ScimDirectoryOptions, ScimHandlerOptions {
  /** Most live tokens of one organisation (two: a new one, and the one it replaces). @default 2 */
  maxTokensPerOrganization?: number | undefined;
}

/** The SCIM module's API (`service.modules.scim`): its endpoint, to mount at `/scim/v2`. */
export interface ScimModule {
  /** Serves a request whose path is relative to where the endpoint is mounted (`/Users`, `/Groups/…`). */
  handle(request: HttpRequest): Promise<HttpResponse>;
  /** The same, for a fetch `Request` whose URL path starts with `mountPath` (`/scim/v2` by default). */
  fetch(request: Request, mountPath?: string): Promise<Response>;
}

interface OrganizationsPort {
  readonly organizationAdmins: OrganizationAdmins | null;
}

const iso = (at: number | null) => (at === null ? null : new Date(at).toISOString());
const summary = (token: ScimTokenRecord) => ({
  id: token.id,
  name: token.name,
  createdAt: iso(token.createdAt)!,
  lastUsedAt: iso(token.lastUsedAt),
});

/** The admins' routes: the organisation's directory, its tokens created (shown once) and revoked. */
function tokenRoutes(options: ScimModuleOptions, kernel: SessionKernel) {
  const { store } = options;
  const { context } = kernel;
  const notFound = () => new DeskpilotError('not_found', { detail: 'No such organisation or token.' });
  const authorize = async (request: HttpRequest, organization: string): Promise<OrganizationCaller> => {
    const admins = kernel.module<OrganizationsPort>('team')?.organizationAdmins;
    if (!admins) throw new DeskpilotError('not_found', { detail: 'This service keeps no organisations.' });
    const result = await admins.authorize(request.headers.get('cookie'), organization);
    if (result.ok) return result.value;
    if (result.reason === 'unauthenticated') throw noSessionError();
    throw notFound();
  };
  return [
    serveRoute(scimRoutes.scimDirectory, async (_deps, request, input) => {
      const { organization } = input.query();
      await authorize(request, organization);
      const [tokens, counts] = await Promise.all([store.listTokens(organization), store.counts(organization)]);
      const used = tokens.map((token) => token.lastUsedAt ?? 0);
      const lastSync = used.length > 0 && Math.max(...used) > 0 ? Math.max(...used) : null;
      return jsonResponse(200, { organization, tokens: tokens.map(summary), lastSync: iso(lastSync), ...counts });
    }),
    serveRoute(scimRoutes.scimDirectoryUsers, async (_deps, request, input) => {
      const query = input.query();
      const { organization } = query;
      const [startIndex, count] = [Number(query.startIndex ?? 1), Number(query.count ?? 50)];
      await authorize(request, organization);
      const page = await store.listUsers(organization, { startIndex, count });
      const users = page.resources.map((user) => ({
        id: user.id,
        userName: user.userName,
        externalId: user.externalId,
        active: user.active,
        updatedAt: iso(user.updatedAt)!,
      }));
      return jsonResponse(200, { organization, total: page.total, startIndex, users });
    }),
    serveRoute(scimRoutes.createScimToken, async (_deps, request, input) => {
      const body = await input.body();
      const by = await authorize(request, body.organization);
      const max = options.maxTokensPerOrganization ?? 2;
      const secret = `scim_${base64url.encode(context.randomBytes(32))}`;
      const token: ScimTokenRecord = {
        id: `scimtok_${base64url.encode(context.randomBytes(12))}`,
        organization: body.organization,
        hash: tokenDigest(secret),
        name: body.name,
        createdAt: context.now(),
        lastUsedAt: null,
      };
      // Counted and added at once: of concurrent requests at the limit, none goes past it.
      if ((await store.addToken(token, max)) === 'limit')
        throw new DeskpilotError('conflict', {
          detail: `An organisation has at most ${max} tokens: revoke one first.`,
        });
      await recordOrganizationChange(
        kernel.audit,
        body.organization,
        by,
        {
          type: 'scim-token-created',
          subject: token.id,
          data: { name: token.name },
          undo: () => store.deleteToken(body.organization, token.id),
        },
        context.now(),
      );
      return jsonResponse(201, { token: summary(token), secret });
    }),
    serveRoute(scimRoutes.revokeScimToken, async (_deps, request, input) => {
      const body = await input.body();
      const by = await authorize(request, body.organization);
      const before = (await store.listTokens(body.organization)).find((token) => token.id === body.id);
      if (!before || !(await store.deleteToken(body.organization, body.id))) throw notFound();
      await recordOrganizationChange(
        kernel.audit,
        body.organization,
        by,
        {
          type: 'scim-token-revoked',
          subject: before.id,
          data: { name: before.name },
          undo: async () => {
            if ((await store.addToken(before, Number.MAX_SAFE_INTEGER)) !== 'added') throw new Error('not restored');
          },
        },
        context.now(),
      );
      return { status: 204, headers: [], body: null };
    }),
  ];
}

/**
 * SCIM 2.0 (RFC 7643, 7644) as a module of the session service: an organisation's identity provider
 * pushes its users and groups to `/scim/v2` with a token its admins created. A user is bound to the
 * account with their address (in the organisation's domains), created without a password when there
 * is none; groups give project roles through `groupRoles`; deactivation or deletion removes every
 * membership in the organisation's projects and ends every session open in one of them at once.
 * Needs the team module with organisations. Serves `/sessions/organizations/scim…` for the admins; its
 * API (`service.modules.scim`) is the SCIM endpoint itself, for the host to mount.
 *
 * @example
 * const sessions = createSessionService({
 *   store, directory,
 *   modules: [createTeamModule({ directory, invitations, organizations }),
 *     createScimModule({ store: createMemoryScimStore(), directory, domains: () => ['acme.com'] })],
 * });
 * app.use('/scim/v2', (req, res, next) => sessions.modules.scim
 *   .handle(fromNodeRequest(req, req.path)).then((answer) => writeResponse(res, answer), next));
 */
export function createScimModule(options: ScimModuleOptions): SessionModule<'scim', ScimModule> {
  return {
    name: 'scim',
    create(kernel) {
      // Its tokens are the organisations' admins' to give, and deprovisioning ends memberships in the
      // organisations' projects: without organisations, it would do nothing, silently.
      if (!kernel.module<OrganizationsPort>('team')?.organizationAdmins)
        throw new TypeError('createScimModule needs the team module with organisations, given before it');
      const directory = createScimDirectory(options, kernel);
      const handle = createScimHandler(options.store, directory, options, {
        now: kernel.context.now,
        logger: kernel.logger,
      });
      const routes = tokenRoutes(options, kernel);
      return {
        api: {
          handle,
          async fetch(request, mountPath = '/scim/v2') {
            const incoming = fromFetchRequest(request);
            const path = incoming.path.startsWith(mountPath)
              ? incoming.path.slice(mountPath.length) || '/'
              : incoming.path;
            return toFetchResponse(await handle({ ...incoming, path }));
          },
        },
        routes: (deps) => bindRoutes(routes, deps),
      };
    },
  };
}
