import * as z from 'zod/mini';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../http/http-request.js';
import { readJsonBody } from '../http/read-json-body.js';
import { noSessionError } from '../session/require-session.js';
import type { User } from '../session/user-directory.js';
import { parseWithSchema } from '../validation/parse-with-schema.js';
import type { OrganizationAdmins, OrganizationResult } from './organization-admins.js';
import { email, key, type TeamRouteDependencies } from './team-routes.js';

/** The query of `GET /sessions/organizations/admins`. */
export const organizationQuery = z.strictObject({ organization: key });
/** The body of `POST /sessions/organizations/admins`: an account's address. */
export const addOrganizationAdminBody = z.strictObject({ organization: key, email });
/** The body of `POST /sessions/organizations/admins/remove`. */
export const removeOrganizationAdminBody = z.strictObject({ organization: key, userId: key });

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
export async function serveOrganizationAdmins(
  deps: TeamRouteDependencies,
  request: HttpRequest,
): Promise<HttpResponse> {
  const query = parseWithSchema(organizationQuery, Object.fromEntries(new URLSearchParams(request.search ?? '')));
  const users = valueOf(await admins(deps).list(cookieOf(request), query.organization));
  return jsonResponse(200, { organization: query.organization, admins: users.map(userJson) });
}

/** `POST /sessions/organizations/admins`: one of its admins makes an account an admin of the organisation too. */
export async function serveAddOrganizationAdmin(
  deps: TeamRouteDependencies,
  request: HttpRequest,
): Promise<HttpResponse> {
  const body = parseWithSchema(addOrganizationAdminBody, await readJsonBody(request, deps.maxBodyBytes));
  const user = valueOf(await admins(deps).add(cookieOf(request), body.organization, body.email));
  return jsonResponse(201, { organization: body.organization, admin: userJson(user) });
}

/** `POST /sessions/organizations/admins/remove`: one of its admins ends another's (or their own) role; never the last. */
export async function serveRemoveOrganizationAdmin(
  deps: TeamRouteDependencies,
  request: HttpRequest,
): Promise<HttpResponse> {
  const body = parseWithSchema(removeOrganizationAdminBody, await readJsonBody(request, deps.maxBodyBytes));
  valueOf(await admins(deps).remove(cookieOf(request), body.organization, body.userId));
  return { status: 204, headers: [], body: null };
}
