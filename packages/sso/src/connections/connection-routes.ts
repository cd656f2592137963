import {
  jsonResponse,
  noSessionError,
  serveRoute,
  type ServedRoute,
  type SessionKernel,
  type SessionRouteDependencies,
} from '@deskpilot/core/module';
import { DeskpilotError, type HttpRequest } from '@deskpilot/core/session';
import {
  recordOrganizationChange,
  type OrganizationAdmins,
  type OrganizationCaller,
  type OrganizationChange,
  type TeamDirectory,
} from '@deskpilot/core/team';
import { base64url } from 'jose';
import type { RouteInput } from '@deskpilot/core/routes';
import { ssoConnectionRoutes } from './connection-api.js';
import { mappedRoles, type ProviderCheck, type SsoProvider } from '../single-sign-on.js';
import type { SecretBox } from './secret-box.js';
import {
  secretContext,
  type SsoConnectionRecord,
  type SsoConnectionReplaceResult,
  type SsoConnectionStore,
} from './sso-connection-store.js';

/** The `connections` option of the single sign-on module: where organisations' connections are kept, and the box that seals their secrets. */
export interface SsoConnectionsOptions {
  store: SsoConnectionStore;
  secrets: SecretBox;
  /**
   * The email domains each organisation owns, as the operator knows them: the only ones its admins may
   * give a connection, and the only ones a connection signs anyone in for (a domain the operator no
   * longer lists stops counting at once). Whoever holds a domain's provider holds its people's
   * accounts, so no admin may claim a domain on their own word.
   */
  domains: (organization: string) => readonly string[] | Promise<readonly string[]>;
  /** Most connections of one organisation. @default 10 */
  maxPerOrganization?: number;
  /**
   * Where the roles a connection's `roles` give are written at each sign-in through it (the directory
   * the team module is given). Without it, no connection may have `roles`.
   */
  memberships?: Pick<TeamDirectory, 'changeMembership'>;
  /**
   * Whether the organisation's directory deprovisioned this account (`@deskpilot/scim`: its user there
   * is inactive): then a sign-in's groups give it no role back.
   */
  deprovisioned?: (organization: string, userId: string) => Promise<boolean>;
}

/** What of the team module the connections' routes use: who administers which organisation. */
interface OrganizationsPort {
  readonly organizationAdmins: OrganizationAdmins | null;
}

type Connection = SsoConnectionRecord;

/** A connection as its organisation's admins see it: never its secret, sealed or not. */
function summary(record: Connection) {
  const { sealedClientSecret: _sealed, settings, createdAt, updatedAt, ...rest } = record;
  const { scopes, emailVerifiedClaim, requiredClaims, roles, signInRequired } = settings;
  return {
    ...rest,
    settings: { scopes, emailVerifiedClaim, requiredClaims, roles, signInRequired },
    createdAt: new Date(createdAt).toISOString(),
    updatedAt: new Date(updatedAt).toISOString(),
  };
}

const refused = {
  notFound: () => new DeskpilotError('not_found', { detail: 'No such organisation or connection.' }),
  domainTaken: () =>
    new DeskpilotError('conflict', {
      detail: 'A domain of this connection is already the domain of another connection.',
    }),
  notOwned: (domain: string) =>
    new DeskpilotError('forbidden', {
      detail: `${domain} is not a domain of this organisation: the operator lists the domains each organisation owns.`,
    }),
  tooMany: (max: number) =>
    new DeskpilotError('conflict', { detail: `An organisation has at most ${max} connections: delete one first.` }),
  secretNeeded: () =>
    new DeskpilotError('invalid_request', {
      detail:
        "A connection's new issuer needs its client secret: the secret is never sent to an issuer it was not given for.",
    }),
  changed: () => new DeskpilotError('conflict', { detail: 'The connection changed since it was read: read it again.' }),
};

/**
 * An issuer as OpenID Connect has it: an `https` URL (`http` only with `allowInsecureRequests`, for a
 * provider in a test), with no credentials, query or fragment; refused 400 otherwise.
 */
function checkIssuer(issuer: string, allowInsecure: boolean): void {
  let url: URL | undefined;
  try {
    url = new URL(issuer);
  } catch {
    url = undefined;
  }
  const secure = url?.protocol === 'https:' || (allowInsecure && url?.protocol === 'http:');
  if (!url || !secure || url.username || url.password || url.search || url.hash)
    throw new DeskpilotError('invalid_request', {
      detail: 'The issuer must be an https URL with no credentials, query or fragment.',
    });
}

type CreateBody = RouteInput<(typeof ssoConnectionRoutes)['createSsoConnection']>;
type UpdateBody = RouteInput<(typeof ssoConnectionRoutes)['updateSsoConnection']>;

/** What an update may change: the trail names the fields it changed. */
const changeable = [
  'name',
  'issuer',
  'clientId',
  'clientSecret',
  'tokenEndpointAuthMethod',
  'domains',
  'settings',
  'enabled',
] as const;

/**
 * An update's new client secret sealed for the issuer the connection has after it; undefined when it
 * keeps its secret. Refused: an issuer that is not one, a new issuer without its secret.
 */
async function sealedUpdate(
  secrets: SecretBox,
  allowInsecure: boolean,
  before: Connection,
  body: UpdateBody,
): Promise<string | undefined> {
  if (body.issuer !== undefined) checkIssuer(body.issuer, allowInsecure);
  const issuer = body.issuer ?? before.issuer;
  if (issuer !== before.issuer && body.clientSecret === undefined) throw refused.secretNeeded();
  if (body.clientSecret === undefined) return undefined;
  return secrets.seal(body.clientSecret, secretContext({ id: before.id, issuer }));
}

/** Refuses a replacement that did not happen: no such connection, another version, a domain that is another's. */
function checkReplaced(outcome: SsoConnectionReplaceResult): void {
  if (outcome === 'not_found') throw refused.notFound();
  if (outcome === 'conflict') throw refused.changed();
  if (outcome === 'domain_taken') throw refused.domainTaken();
}

/** A new connection at version 1, its domains once each and sorted. */
function newConnection(id: string, body: CreateBody, sealedClientSecret: string, now: number): Connection {
  return {
    id,
    organization: body.organization,
    name: body.name,
    issuer: body.issuer,
    clientId: body.clientId,
    sealedClientSecret,
    tokenEndpointAuthMethod: body.tokenEndpointAuthMethod ?? 'client_secret_post',
    domains: [...new Set(body.domains)].sort(),
    settings: body.settings ?? {},
    enabled: body.enabled ?? true,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
}

/** `before` with what the update gives, at its next version (`sealedClientSecret` when a new secret came). */
function changedConnection(
  before: Connection,
  body: UpdateBody,
  sealedClientSecret: string | undefined,
  now: number,
): Connection {
  return {
    ...before,
    name: body.name ?? before.name,
    issuer: body.issuer ?? before.issuer,
    clientId: body.clientId ?? before.clientId,
    sealedClientSecret: sealedClientSecret ?? before.sealedClientSecret,
    tokenEndpointAuthMethod: body.tokenEndpointAuthMethod ?? before.tokenEndpointAuthMethod,
    domains: body.domains ? [...new Set(body.domains)].sort() : before.domains,
    settings: body.settings ?? before.settings,
    enabled: body.enabled ?? before.enabled,
    updatedAt: now,
    version: before.version + 1,
  };
}

/**
 * A connection tested now, as a sign-in would reach it (nothing changed, enabled or not): its secret
 * opens, the provider's checks, the domains that count and the projects a sign-in may open.
 */
async function testConnection(
  connection: Connection,
  options: SsoConnectionsOptions,
  kernel: SessionKernel,
  checkProvider: (provider: SsoProvider) => Promise<ProviderCheck[]>,
  groups: readonly string[] | undefined,
) {
  const owned = new Set(await options.domains(connection.organization));
  const domains = connection.domains.filter((domain) => owned.has(domain));
  const projects =
    (await kernel.module<OrganizationsPort>('team')?.organizationAdmins?.projects(connection.organization)) ?? [];
  const clientSecret = await options.secrets
    .open(connection.sealedClientSecret, secretContext(connection))
    .catch(() => undefined);
  const checks = clientSecret
    ? [
        { check: 'secret' as const, ok: true, detail: 'The client secret opens under the current keys' },
        ...(await checkProvider({ ...connection, clientSecret, domains, projects })),
      ]
    : [{ check: 'secret' as const, ok: false, detail: 'The client secret does not open: give it again' }];
  const ok = checks.every((check) => check.ok) && domains.length > 0 && projects.length > 0;
  // The dry run: what someone in these groups would hold, as a sign-in would write it.
  const roles = connection.settings.roles;
  const dryRun = groups && roles ? { roles: mappedRoles(roles, { [roles.claim]: [...groups] }) } : {};
  return { id: connection.id, ok, checks, domains, projects, ...dryRun };
}

/** The domains the operator lists for an organisation, in order, each with its connection (if any). */
async function domainsOf(options: SsoConnectionsOptions, organization: string) {
  const connections = await options.store.listByOrganization(organization);
  const owned = [...new Set(await options.domains(organization))].sort();
  return owned.map((domain) => {
    const authority = connections.find((connection) => connection.domains.includes(domain));
    return {
      domain,
      connection: authority ? { id: authority.id, name: authority.name, enabled: authority.enabled } : null,
    };
  });
}

/** What the trail says of a connection (never its secret). */
const described = (connection: Connection) => ({
  name: connection.name,
  issuer: connection.issuer,
  domains: connection.domains,
  enabled: connection.enabled,
  signInRequired: connection.settings.signInRequired === true,
});

/** Who may edit what: the organisation's admins, its connections, the domains the operator lists for it. */
function connectionAccess(options: SsoConnectionsOptions, kernel: SessionKernel) {
  const { store } = options;
  // Looked up when asked, as sign-in does: a team module given after this one still serves both.
  const organizationAdmins = () => kernel.module<OrganizationsPort>('team')?.organizationAdmins;
  /** Refuses (403) a domain the operator does not list for the organisation. */
  const checkOwned = async (organization: string, domains: readonly string[]) => {
    const owned = new Set(await options.domains(organization));
    const foreign = domains.find((domain) => !owned.has(domain));
    if (foreign !== undefined) throw refused.notOwned(foreign);
  };

  /** Refuses (400) roles in a project that is not the organisation's, or without a place to write them. */
  const checkRoles = (by: OrganizationCaller, settings: Connection['settings'] | undefined) => {
    const rules = settings?.roles?.rules ?? [];
    if (rules.length > 0 && !options.memberships)
      throw new DeskpilotError('invalid_request', { detail: 'This service keeps no roles from a connection.' });
    const roles = kernel.module<{ roles?: readonly string[] }>('team')?.roles ?? [];
    const unknown = rules.find((rule) => !roles.includes(rule.role));
    if (unknown)
      throw new DeskpilotError('invalid_request', { detail: `${unknown.role} is not a role of this service's teams.` });
    const outside = rules.find((rule) => !by.projects.includes(rule.projectKey));
    if (outside)
      throw new DeskpilotError('invalid_request', {
        detail: `${outside.projectKey} is not a project of this organisation: a connection gives roles in its projects only.`,
      });
  };
  /** The signed-in admin of `organization`, or the refusal as a problem. */
  const authorize = async (request: HttpRequest, organization: string): Promise<OrganizationCaller> => {
    const admins = organizationAdmins();
    if (!admins) throw new DeskpilotError('not_found', { detail: 'This service keeps no organisations.' });
    const result = await admins.authorize(request.headers.get('cookie'), organization);
    if (result.ok) return result.value;
    if (result.reason === 'unauthenticated') throw noSessionError();
    throw refused.notFound();
  };
  /** The organisation's connection with this id, or 404 (another organisation's alike). */
  const connectionOf = async (organization: string, id: string) => {
    const record = await store.get(id);
    if (record?.organization !== organization) throw refused.notFound();
    return record;
  };
  /** Whether the organisation requires its connections (one of them says so). */
  const isRequired = async (organization: string) =>
    (await store.listByOrganization(organization)).some(requiresSignIn);
  /**
   * When the organisation requires its connections now and did not before (`required`: whether it did):
   * every session active in its projects ends but its admins' (everyone signs in again, through the
   * provider); as many as ended.
   */
  const endSessionsOnceRequired = async (organization: string, required: boolean, undo: () => Promise<void>) => {
    const admins = organizationAdmins();
    try {
      if (required || !admins || !(await isRequired(organization))) return 0;
      const [projects, keep] = await Promise.all([admins.projects(organization), admins.adminIds(organization)]);
      return await kernel.context.store.deleteInProjects(projects, keep);
    } catch (error) {
      // Required, with the sessions of before still open: not so. The change is undone, and fails.
      await undo().catch(() => {});
      throw error;
    }
  };
  return { checkOwned, checkRoles, authorize, connectionOf, endSessionsOnceRequired, isRequired };
}

const requiresSignIn = (connection: Connection) => connection.settings.signInRequired === true;

/**
 * The routes through which an organisation's admins edit its connections: each change made, then
 * recorded in every project of the organisation (a trail that cannot record it undoes it).
 */
export function servedConnectionRoutes(
  options: SsoConnectionsOptions,
  kernel: SessionKernel,
  allowInsecureRequests: boolean,
  checkProvider: (provider: SsoProvider) => Promise<ProviderCheck[]>,
): Array<ServedRoute<SessionRouteDependencies>> {
  const { store, secrets } = options;
  const { context } = kernel;
  const access = connectionAccess(options, kernel);
  const { checkOwned, checkRoles, authorize, connectionOf, endSessionsOnceRequired } = access;
  const record = (organization: string, by: OrganizationCaller, change: OrganizationChange) =>
    recordOrganizationChange(kernel.audit, organization, by, change, context.now());

  return [
    serveRoute(ssoConnectionRoutes.ssoConnections, async (_deps, request, input) => {
      const { organization } = input.query();
      await authorize(request, organization);
      const connections = await store.listByOrganization(organization);
      return jsonResponse(200, { organization, connections: connections.map(summary) });
    }),

    serveRoute(ssoConnectionRoutes.ssoDomains, async (_deps, request, input) => {
      const { organization } = input.query();
      await authorize(request, organization);
      return jsonResponse(200, { organization, domains: await domainsOf(options, organization) });
    }),

    serveRoute(ssoConnectionRoutes.createSsoConnection, async (_deps, request, input) => {
      const body = await input.body();
      const by = await authorize(request, body.organization);
      checkIssuer(body.issuer, allowInsecureRequests);
      await checkOwned(body.organization, body.domains);
      checkRoles(by, body.settings);
      const max = options.maxPerOrganization ?? 10;
      const existing = await store.listByOrganization(body.organization);
      if (existing.length >= max) throw refused.tooMany(max);
      const id = `conn_${base64url.encode(context.randomBytes(16))}`;
      const sealed = await secrets.seal(body.clientSecret, secretContext({ id, issuer: body.issuer }));
      const created = newConnection(id, body, sealed, context.now());
      const outcome = await store.create(created);
      if (outcome === 'domain_taken') throw refused.domainTaken();
      if (outcome !== 'created') throw refused.changed();
      const undo = async () => {
        if (!(await store.delete(id))) throw new Error(`connection ${id} could not be deleted again`);
      };
      const sessionsEnded = await endSessionsOnceRequired(body.organization, existing.some(requiresSignIn), undo);
      await record(body.organization, by, {
        type: 'sso-connection-created',
        subject: id,
        data: { ...described(created), sessionsEnded },
        undo,
      });
      return jsonResponse(201, { connection: summary(created) });
    }),

    serveRoute(ssoConnectionRoutes.updateSsoConnection, async (_deps, request, input) => {
      const body = await input.body();
      const by = await authorize(request, body.organization);
      const before = await connectionOf(body.organization, body.id);
      if (before.version !== body.version) throw refused.changed();
      if (body.domains) await checkOwned(body.organization, body.domains);
      checkRoles(by, body.settings);
      const sealed = await sealedUpdate(secrets, allowInsecureRequests, before, body);
      const after = changedConnection(before, body, sealed, context.now());
      const required = await access.isRequired(body.organization);
      checkReplaced(await store.replace(after));
      const changed = changeable.filter((field) => body[field] !== undefined);
      // Put back as it was, as a newer version (an edit made since wins over the undo).
      const undo = async () => {
        const undone = await store.replace({ ...before, version: after.version + 1 });
        if (undone !== 'replaced') throw new Error(`connection ${before.id} could not be put back (${undone})`);
      };
      const sessionsEnded = await endSessionsOnceRequired(body.organization, required, undo);
      await record(body.organization, by, {
        type: 'sso-connection-changed',
        subject: before.id,
        data: { ...described(after), changed, sessionsEnded },
        undo,
      });
      return jsonResponse(200, { connection: summary(after) });
    }),

    serveRoute(ssoConnectionRoutes.testSsoConnection, async (_deps, request, input) => {
      const body = await input.body();
      await authorize(request, body.organization);
      const connection = await connectionOf(body.organization, body.id);
      return jsonResponse(200, await testConnection(connection, options, kernel, checkProvider, body.groups));
    }),

    serveRoute(ssoConnectionRoutes.deleteSsoConnection, async (_deps, request, input) => {
      const body = await input.body();
      const by = await authorize(request, body.organization);
      const before = await connectionOf(body.organization, body.id);
      if (!(await store.delete(before.id))) throw refused.notFound();
      await record(body.organization, by, {
        type: 'sso-connection-deleted',
        subject: before.id,
        data: described(before),
        // Recreated at version 1: an edit read before the deletion then conflicts no more (a rare race
        // of an undone deletion, recorded as such).
        undo: async () => {
          const undone = await store.create(before);
          if (undone !== 'created') throw new Error(`connection ${before.id} could not be recreated (${undone})`);
        },
      });
      return { status: 204, headers: [], body: null };
    }),
  ];
}
