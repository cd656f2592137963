import { DeskpilotError } from '../errors/deskpilot-error.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../http/http-request.js';
import { noSessionError } from '../session/require-session.js';
import type { User } from '../session/user-directory.js';
import type { OrganizationAdmins, OrganizationResult } from './organization-admins.js';
import type { TeamRouteDependencies } from './team-routes.js';
import { serveRoute, type RouteRequestInput, type ServedRoute } from '../routes/route-table.js';
import { organizationRoutes } from './team-api.js';

export { addOrganizationAdminBody, organizationQuery, removeOrganizationAdminBody } from './team-api.js';

/** The organisation's admins, or its refusal thrown as a problem. */
function valueOf<T>(result: OrganizationResult<T>): T {
  if (result.ok) return result.value;
  if (result.reason === 'unauthenticated') throw noSessionError();
  if (result.reason === 'last_admin')
    throw new DeskpilotError('last_admin', {
      detail: 'An organisation keeps at least one admin: make someone else its admin first.',
    });
  // One answer for "no such organisation", "not its admin" and "no such account": nothing to probe.
  throw new DeskpilotError('not_found', { detail: 'No such organisation, admin or account.' });
}

/** The organisation admins of the service, or 404 when it keeps no organisations. */
function admins(deps: TeamRouteDependencies): OrganizationAdmins {
  if (deps.team.organizationAdmins) return deps.team.organizationAdmins;
  throw new DeskpilotError('not_found', { detail: 'This service keeps no organisations.' });
}

const userJson = (user: User) => ({ id: user.id, email: user.email, name: user.name });
const cookieOf = (request: HttpRequest) => request.headers.get('cookie');

/** `GET /sessions/organizations/admins?organization=…`: the organisation's admins (for one of them). */
async function serveOrganizationAdmins(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof organizationRoutes)['organizationAdmins']>,
): Promise<HttpResponse> {
  const query = input.query();
  const users = valueOf(await admins(deps).list(cookieOf(request), query.organization));
  return jsonResponse(200, { organization: query.organization, admins: users.map(userJson) });
}

/** `POST /sessions/organizations/admins`: one of its admins makes an account an admin of the organisation too. */
async function serveAddOrganizationAdmin(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof organizationRoutes)['addOrganizationAdmin']>,
): Promise<HttpResponse> {
  const body = await input.body();
  const user = valueOf(await admins(deps).add(cookieOf(request), body.organization, body.email));
  return jsonResponse(201, { organization: body.organization, admin: userJson(user) });
}

/** `POST /sessions/organizations/admins/remove`: one of its admins ends another's (or their own) role; never the last. */
async function serveRemoveOrganizationAdmin(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof organizationRoutes)['removeOrganizationAdmin']>,
): Promise<HttpResponse> {
  const body = await input.body();
  valueOf(await admins(deps).remove(cookieOf(request), body.organization, body.userId));
  return { status: 204, headers: [], body: null };
}

/** The routes of this file, served. */
export const servedOrganizationRoutes: ReadonlyArray<ServedRoute<TeamRouteDependencies>> = [
  serveRoute(organizationRoutes.organizationAdmins, serveOrganizationAdmins, { spanName: 'organization_admins' }),
  serveRoute(organizationRoutes.addOrganizationAdmin, serveAddOrganizationAdmin, {
    spanName: 'organization_add_admin',
  }),
  serveRoute(organizationRoutes.removeOrganizationAdmin, serveRemoveOrganizationAdmin, {
    spanName: 'organization_remove_admin',
  }),
];
