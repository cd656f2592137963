import type { AuditRecord } from '../audit/audit-store.js';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../http/http-request.js';
import { noSessionError } from '../session/require-session.js';
import { signInClient, throttleAddress, type SessionRouteDependencies } from '../session/session-routes.js';
import type { SessionTeam } from './session-team.js';
import type { InvitationSummary, TeamCaller, TeamRefusal } from './create-team-admin.js';
import { rolePolicyProblem, type StoredRolePolicy } from './role-policy.js';

export {
  acceptInvitationBody,
  auditQuery,
  auditVerifyQuery,
  changeRoleBody,
  email,
  inviteBody,
  key,
  memberSessionsQuery,
  policyBody,
  removeMemberBody,
  revokeInvitationBody,
  revokeMemberSessionsBody,
  teamQuery,
} from './team-api.js';
import { serveRoute, type RouteRequestInput, type ServedRoute } from '../routes/route-table.js';
import { teamRoutes } from './team-api.js';

/** What the team routes run on: the session routes' dependencies and the service's team. */
export interface TeamRouteDependencies extends SessionRouteDependencies {
  team: SessionTeam;
}

const refusal: Record<TeamRefusal, () => DeskpilotError> = {
  unauthenticated: noSessionError,
  forbidden: () => new DeskpilotError('forbidden', { detail: 'Only an admin of this project can do this.' }),
  // One answer for "no such project" and "not a member there": nothing to probe.
  not_found: () => new DeskpilotError('not_found', { detail: 'No such project, member or invitation.' }),
  last_admin: () =>
    new DeskpilotError('last_admin', { detail: 'A project keeps at least one admin: make someone else admin first.' }),
  already_member: () => new DeskpilotError('conflict', { detail: 'This address is already a member of the project.' }),
  invalid_role: () =>
    new DeskpilotError('invalid_request', {
      detail: 'Unknown role.',
      errors: [{ path: 'role', message: 'Must be one of the project roles' }],
    }),
  invalid_token: () =>
    new DeskpilotError('invalid_token', {
      detail: 'This invitation is not valid: it may have been used, revoked or have expired. Ask for a new one.',
    }),
  wrong_account: () =>
    new DeskpilotError('forbidden', { detail: 'This invitation is for another address: sign in with that one.' }),
  sign_in_first: () =>
    new DeskpilotError('conflict', { detail: 'The invited address has an account: sign in with it, then accept.' }),
  invalid_client: () =>
    new DeskpilotError('invalid_request', {
      detail: 'Not a client of this project.',
      errors: [{ path: 'clientId', message: 'Must be a client the project already has' }],
    }),
  too_many_invitations: () =>
    new DeskpilotError('conflict', {
      detail: 'Too many pending invitations: revoke some, or wait for them to be used.',
    }),
  conflict: () =>
    new DeskpilotError('conflict', {
      detail: 'The policy was changed meanwhile: read it again, then make your change.',
    }),
  weak_password: () =>
    new DeskpilotError('invalid_request', {
      detail: 'The password is too short.',
      errors: [{ path: 'password', message: 'Too short' }],
    }),
  busy: () =>
    new DeskpilotError('unavailable', {
      detail: 'Too many passwords are being checked right now. Try again in a moment.',
      headers: { 'retry-after': '1' },
    }),
};

/** The value of a team result, or the refusal it names thrown as its problem. */
function valueOf<T>(result: { ok: true; value: T } | { ok: false; reason: TeamRefusal }): T {
  if (!result.ok) throw refusal[result.reason]();
  return result.value;
}

const cookieHeader = (request: HttpRequest) => request.headers.get('cookie');
const noContent = (): HttpResponse => ({ status: 204, headers: [], body: null });

/** The caller as an admin of the project the request names (query or body). */
async function admin(deps: TeamRouteDependencies, request: HttpRequest, projectKey: string): Promise<TeamCaller> {
  return valueOf(await deps.team.authorize(cookieHeader(request), projectKey));
}

/** `GET /sessions/team/members?projectKey=…`: the project's members and pending invitations. */
async function serveListMembers(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof teamRoutes)['teamMembers']>,
): Promise<HttpResponse> {
  const query = input.query();
  const caller = await admin(deps, request, query.projectKey);
  const [members, invitations] = await Promise.all([deps.team.listMembers(caller), deps.team.listInvitations(caller)]);
  return jsonResponse(200, {
    projectKey: caller.projectKey,
    roles: deps.team.roles,
    members,
    invitations: invitations.map(invitationJson),
  });
}

/** `POST /sessions/team/members/role`: sets a member's role. */
async function serveChangeRole(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof teamRoutes)['changeMemberRole']>,
): Promise<HttpResponse> {
  const body = await input.body();
  const caller = await admin(deps, request, body.projectKey);
  return jsonResponse(200, valueOf(await deps.team.changeRole(caller, body.userId, body.role)));
}

/** `POST /sessions/team/members/remove`: removes a member (their sessions in the project end). */
async function serveRemoveMember(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof teamRoutes)['removeMember']>,
): Promise<HttpResponse> {
  const body = await input.body();
  const caller = await admin(deps, request, body.projectKey);
  valueOf(await deps.team.removeMember(caller, body.userId));
  return noContent();
}

/** `POST /sessions/team/invitations`: 201 with the invitation (and its token once, when it is not emailed). */
async function serveInvite(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof teamRoutes)['invite']>,
): Promise<HttpResponse> {
  const body = await input.body();
  const caller = await admin(deps, request, body.projectKey);
  const { invitation, ...handOver } = valueOf(await deps.team.invite(caller, body));
  return jsonResponse(201, { invitation: invitationJson(invitation), ...handOver });
}

/** `POST /sessions/team/invitations/revoke`. */
async function serveRevokeInvitation(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof teamRoutes)['revokeInvitation']>,
): Promise<HttpResponse> {
  const body = await input.body();
  const caller = await admin(deps, request, body.projectKey);
  valueOf(await deps.team.revokeInvitation(caller, body.id));
  return noContent();
}

/**
 * `POST /sessions/invitations/accept`: a signed-in invitee joins (200, the session as it is now); with
 * `name` and `password`, someone without an account gets one and is signed in (201 and the cookie).
 */
async function serveAcceptInvitation(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof teamRoutes)['acceptInvitation']>,
): Promise<HttpResponse> {
  const body = await input.body();
  if (body.password === undefined || body.name === undefined) {
    if (body.password !== undefined || body.name !== undefined)
      throw new DeskpilotError('invalid_request', {
        detail: 'A new account needs both a name and a password.',
        errors: [{ path: body.name === undefined ? 'name' : 'password', message: 'Required with the other' }],
      });
    const invitation = valueOf(await deps.team.acceptInvitation(cookieHeader(request), body.token));
    const resolved = await deps.service.resolve(cookieHeader(request));
    if (!resolved) throw noSessionError();
    return jsonResponse(200, { invitation: invitationJson(invitation), session: resolved.session });
  }
  // Checked before the throttle: a refusal that costs nothing counts in no budget.
  if (body.password.length < deps.team.minPasswordLength) throw refusal.weak_password();
  // A password hash per request: the same budget per address as a sign-in.
  await throttleAddress(deps, request, {
    limiter: deps.loginThrottle.address,
    name: 'login-address',
    what: 'login throttling',
    detail: 'Too many attempts. Try again later.',
  });
  const result = await deps.team.acceptAsNewAccount(
    { token: body.token, name: body.name, password: body.password },
    cookieHeader(request),
    signInClient(deps, request),
  );
  const signedIn = valueOf(result);
  const response = jsonResponse(201, signedIn.session, [['set-cookie', signedIn.setCookie]]);
  if (signedIn.setDeviceCookie) response.headers.push(['set-cookie', signedIn.setDeviceCookie]);
  return response;
}

/** `GET /sessions/team/sessions?projectKey=…&userId=…`: a member's live sessions in the project. */
async function serveMemberSessions(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof teamRoutes)['memberSessions']>,
): Promise<HttpResponse> {
  const query = input.query();
  const caller = await admin(deps, request, query.projectKey);
  return jsonResponse(200, { sessions: valueOf(await deps.team.memberSessions(caller, query.userId)) });
}

/** `POST /sessions/team/sessions/revoke`: ends one of a member's sessions in the project, or all of them. */
async function serveRevokeMemberSessions(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof teamRoutes)['revokeMemberSessions']>,
): Promise<HttpResponse> {
  const body = await input.body();
  const caller = await admin(deps, request, body.projectKey);
  return jsonResponse(200, { revoked: valueOf(await deps.team.revokeMemberSessions(caller, body.userId, body.id)) });
}

/** `GET /sessions/organizations`: the organisations the signed-in user administers, each with its projects. */
async function serveOrganizations(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  _input: RouteRequestInput<(typeof teamRoutes)['organizations']>,
): Promise<HttpResponse> {
  const organizations = await deps.team.organizations(cookieHeader(request));
  if (!organizations) throw noSessionError();
  return jsonResponse(200, { organizations });
}

/** `GET /sessions/team/policy?projectKey=…`: the project's role policy, and the flags it may name. */
async function servePolicy(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof teamRoutes)['teamPolicy']>,
): Promise<HttpResponse> {
  const query = input.query();
  const caller = await admin(deps, request, query.projectKey);
  return jsonResponse(200, policyJson(deps, await deps.team.policy(caller)));
}

/** `POST /sessions/team/policy`: replaces the project's role policy (409 when it changed since `version`). */
async function serveSetPolicy(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof teamRoutes)['setTeamPolicy']>,
): Promise<HttpResponse> {
  const body = await input.body();
  const caller = await admin(deps, request, body.projectKey);
  const problem = rolePolicyProblem(body, deps.team.roles, deps.team.capabilities);
  if (problem)
    throw new DeskpilotError('invalid_request', {
      detail: 'The policy names an unknown role or flag.',
      errors: [problem],
    });
  return jsonResponse(200, policyJson(deps, valueOf(await deps.team.setPolicy(caller, body, body.version))));
}

/**
 * `GET /sessions/current/capabilities`: the signed-in user's capability flags in their active project,
 * from its role policy now, with the session — what a studio builds the chat context (or grant) from,
 * per request, in one call.
 */
async function serveCapabilities(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  _input: RouteRequestInput<(typeof teamRoutes)['currentCapabilities']>,
): Promise<HttpResponse> {
  const resolved = await deps.service.resolve(cookieHeader(request));
  if (!resolved) throw noSessionError();
  const { session } = resolved;
  const capabilities = await deps.team.capabilitiesFor(session.projectKey, session.role);
  return jsonResponse(200, { projectKey: session.projectKey, role: session.role, capabilities, session });
}

/** A policy as the API shows it: the flags it may name beside it. */
function policyJson(deps: TeamRouteDependencies, policy: StoredRolePolicy) {
  return {
    ...policy,
    updatedAt: policy.updatedAt === 0 ? null : new Date(policy.updatedAt).toISOString(),
    capabilities: Object.entries(deps.team.capabilities).map(([name, { kind }]) => ({ name, kind })),
  };
}

/** `GET /sessions/team/audit?projectKey=…`: the trail newest first, filtered, a page at a time (`next`). */
async function serveAuditLog(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof teamRoutes)['teamAudit']>,
): Promise<HttpResponse> {
  const query = input.query();
  const caller = await admin(deps, request, query.projectKey);
  const limit = query.limit === undefined ? 50 : Number(query.limit);
  const records = await deps.team.auditLog(caller, {
    actor: query.actor,
    type: query.type,
    from: query.from === undefined ? undefined : Date.parse(query.from),
    to: query.to === undefined ? undefined : Date.parse(query.to),
    beforeSeq: query.before === undefined ? undefined : Number(query.before),
    limit,
  });
  if (records === null) throw noAuditTrail();
  const next = records.length === limit ? String(records.at(-1)!.seq) : null;
  return jsonResponse(200, { records: records.map(auditJson), next });
}

/**
 * `GET /sessions/team/audit/verify?projectKey=…`: walks the project's whole trail on any store — 200
 * with `ok: true` and its head, or `ok: false` naming the first record edited, missing, unchained or rewritten.
 */
async function serveAuditVerify(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof teamRoutes)['verifyTeamAudit']>,
): Promise<HttpResponse> {
  const query = input.query();
  if ((query.expectSeq === undefined) !== (query.expectHash === undefined))
    throw new DeskpilotError('invalid_request', {
      detail: 'A head kept elsewhere needs both its record number and its hash.',
      errors: [
        { path: query.expectSeq === undefined ? 'expectSeq' : 'expectHash', message: 'Required with the other' },
      ],
    });
  const caller = await admin(deps, request, query.projectKey);
  const expectHead =
    query.expectSeq === undefined ? undefined : { seq: Number(query.expectSeq), hash: query.expectHash! };
  const verification = await deps.team.verifyAudit(caller, expectHead);
  if (verification === null) throw noAuditTrail();
  if (verification === 'busy')
    throw new DeskpilotError('unavailable', {
      detail: 'Other audit trails are being verified right now. Try again in a moment.',
      headers: { 'retry-after': '5' },
    });
  return jsonResponse(200, verification);
}

/** `GET /sessions/team/audit/export?projectKey=…`: the whole trail as JSON lines, oldest first, hashes included. */
async function serveAuditExport(
  deps: TeamRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof teamRoutes)['exportTeamAudit']>,
): Promise<HttpResponse> {
  const query = input.query();
  const caller = await admin(deps, request, query.projectKey);
  const chain = deps.team.auditChain(caller);
  if (chain === null) throw noAuditTrail();
  const iterator = chain[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(`${JSON.stringify(auditJson(next.value))}\n`));
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  return {
    status: 200,
    headers: [
      ['content-type', 'application/x-ndjson; charset=utf-8'],
      ['content-disposition', 'attachment; filename="audit.jsonl"'],
    ],
    body,
  };
}

const noAuditTrail = () => new DeskpilotError('not_found', { detail: 'This service keeps no audit trail.' });

/** An audit record as the API shows it: its time in ISO 8601 beside the chain's fields. */
function auditJson(record: AuditRecord) {
  return { ...record, time: new Date(record.at).toISOString() };
}

/** An invitation as the API shows it: times in ISO 8601. */
function invitationJson(invitation: InvitationSummary) {
  return {
    ...invitation,
    createdAt: new Date(invitation.createdAt).toISOString(),
    expiresAt: new Date(invitation.expiresAt).toISOString(),
  };
}

/** The routes of this file, served. */
export const servedTeamRoutes: ReadonlyArray<ServedRoute<TeamRouteDependencies>> = [
  serveRoute(teamRoutes.teamMembers, serveListMembers, { spanName: 'team_members' }),
  serveRoute(teamRoutes.changeMemberRole, serveChangeRole, { spanName: 'team_change_role' }),
  serveRoute(teamRoutes.removeMember, serveRemoveMember, { spanName: 'team_remove_member' }),
  serveRoute(teamRoutes.invite, serveInvite, { spanName: 'team_invite' }),
  serveRoute(teamRoutes.revokeInvitation, serveRevokeInvitation, { spanName: 'team_revoke_invitation' }),
  serveRoute(teamRoutes.acceptInvitation, serveAcceptInvitation, { spanName: 'invitation_accept' }),
  serveRoute(teamRoutes.memberSessions, serveMemberSessions, { spanName: 'team_member_sessions' }),
  serveRoute(teamRoutes.revokeMemberSessions, serveRevokeMemberSessions, { spanName: 'team_revoke_sessions' }),
  serveRoute(teamRoutes.teamPolicy, servePolicy, { spanName: 'team_policy' }),
  serveRoute(teamRoutes.setTeamPolicy, serveSetPolicy, { spanName: 'team_set_policy' }),
  serveRoute(teamRoutes.currentCapabilities, serveCapabilities, { spanName: 'capabilities' }),
  serveRoute(teamRoutes.organizations, serveOrganizations, { spanName: 'organizations' }),
  serveRoute(teamRoutes.teamAudit, serveAuditLog, { spanName: 'team_audit' }),
  serveRoute(teamRoutes.exportTeamAudit, serveAuditExport, { spanName: 'team_audit_export' }),
  serveRoute(teamRoutes.verifyTeamAudit, serveAuditVerify, { spanName: 'team_audit_verify' }),
];
