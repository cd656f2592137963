import * as z from 'zod/mini';
import type { AuditRecord } from '../audit/audit-store.js';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../http/http-request.js';
import { readJsonBody } from '../http/read-json-body.js';
import { parseWithSchema } from '../validation/parse-with-schema.js';
import { isValidText } from '../validation/valid-text.js';
import { noSessionError } from '../session/require-session.js';
import { signInClient, throttleAddress, type SessionRouteDependencies } from '../session/session-routes.js';
import type { SessionTeam } from '../session/create-session-service.js';
import type { InvitationSummary, TeamCaller, TeamRefusal } from './create-team-admin.js';
import { rolePolicyProblem, type StoredRolePolicy } from './role-policy.js';

/** What the team routes run on: the session routes' dependencies and the service's team. */
export interface TeamRouteDependencies extends SessionRouteDependencies {
  team: SessionTeam;
}

const text = (max: number) =>
  z
    .string()
    .check(z.minLength(1), z.maxLength(max), z.refine(isValidText, 'Must be valid text (no NUL, no lone surrogate)'));
/** A key of the team routes (a project's, a user's, an organisation's): trimmed, 1 to 200 characters of valid text. */
export const key = z
  .string()
  .check(z.trim(), z.minLength(1), z.maxLength(200), z.refine(isValidText, 'Must be valid text'));
/** An email address as the team routes take it. */
export const email = z
  .string()
  .check(
    z.trim(),
    z.minLength(3),
    z.maxLength(320),
    z.regex(/^[^\s@]+@[^\s@]+$/, 'Must be an email address'),
    z.refine(isValidText, 'Must be valid text'),
  );
/** The query of the team's GET routes: `?projectKey=…`. */
export const teamQuery = z.strictObject({ projectKey: key });
/** The body of `POST /sessions/team/members/role`. */
export const changeRoleBody = z.strictObject({ projectKey: key, userId: key, role: text(100) });
/** The body of `POST /sessions/team/members/remove`. */
export const removeMemberBody = z.strictObject({ projectKey: key, userId: key });
/** The query of `GET /sessions/team/sessions`. */
export const memberSessionsQuery = z.strictObject({ projectKey: key, userId: key });
/** The body of `POST /sessions/team/sessions/revoke`: one session (`id`), or all of the member's in the project. */
export const revokeMemberSessionsBody = z.strictObject({ projectKey: key, userId: key, id: z.optional(key) });
const flags = z.record(z.string().check(z.maxLength(100)), z.boolean());
/** The body of `POST /sessions/team/policy`: every role's flags, and the version they replace (0: the built-in policy). */
export const policyBody = z.strictObject({
  projectKey: key,
  roles: z.record(z.string().check(z.minLength(1), z.maxLength(100)), flags),
  version: z.int().check(z.minimum(0), z.maximum(Number.MAX_SAFE_INTEGER)),
});
/** The body of `POST /sessions/team/invitations`. */
export const inviteBody = z.strictObject({ projectKey: key, email, role: text(100), clientId: z.optional(key) });
/** The body of `POST /sessions/team/invitations/revoke`. */
export const revokeInvitationBody = z.strictObject({ projectKey: key, id: key });
/**
 * The body of `POST /sessions/invitations/accept`: the token alone for a signed-in user; with a name
 * and a password, a new account for the invited address.
 */
export const acceptInvitationBody = z.strictObject({
  token: z.string().check(z.minLength(1), z.maxLength(200)),
  name: z.optional(
    z
      .string()
      .check(
        z.trim(),
        z.minLength(1),
        z.maxLength(200),
        z.regex(/^[^\u0000-\u001f\u007f\u2028\u2029]*$/, 'one line, no control characters'),
        z.refine(isValidText, 'Must be valid text'),
      ),
  ),
  password: z.optional(z.string().check(z.minLength(1), z.maxLength(1024))),
});
const isoTime = z.string().check(
  z.maxLength(40),
  z.refine((value) => Number.isSafeInteger(Date.parse(value)), 'Must be an ISO 8601 time'),
);
const whole = (max: number) =>
  z.string().check(
    z.regex(/^[1-9][0-9]{0,15}$/, 'Must be a whole number'),
    z.refine((value) => Number(value) <= max, `At most ${max}`),
  );
/** The query of `GET /sessions/team/audit`. */
export const auditQuery = z.strictObject({
  projectKey: key,
  actor: z.optional(text(320)),
  type: z.optional(text(100)),
  from: z.optional(isoTime),
  to: z.optional(isoTime),
  before: z.optional(whole(Number.MAX_SAFE_INTEGER)),
  limit: z.optional(whole(1000)),
});

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

const queryOf = (request: HttpRequest) => Object.fromEntries(new URLSearchParams(request.search ?? ''));
const cookieHeader = (request: HttpRequest) => request.headers.get('cookie');
const noContent = (): HttpResponse => ({ status: 204, headers: [], body: null });

/** The caller as an admin of the project the request names (query or body). */
async function admin(deps: TeamRouteDependencies, request: HttpRequest, projectKey: string): Promise<TeamCaller> {
  return valueOf(await deps.team.authorize(cookieHeader(request), projectKey));
}

/** `GET /sessions/team/members?projectKey=…`: the project's members and pending invitations. */
export async function serveListMembers(deps: TeamRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const query = parseWithSchema(teamQuery, queryOf(request));
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
export async function serveChangeRole(deps: TeamRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const body = parseWithSchema(changeRoleBody, await readJsonBody(request, deps.maxBodyBytes));
  const caller = await admin(deps, request, body.projectKey);
  return jsonResponse(200, valueOf(await deps.team.changeRole(caller, body.userId, body.role)));
}

/** `POST /sessions/team/members/remove`: removes a member (their sessions in the project end). */
export async function serveRemoveMember(deps: TeamRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const body = parseWithSchema(removeMemberBody, await readJsonBody(request, deps.maxBodyBytes));
  const caller = await admin(deps, request, body.projectKey);
  valueOf(await deps.team.removeMember(caller, body.userId));
  return noContent();
}

/** `POST /sessions/team/invitations`: 201 with the invitation (and its token once, when it is not emailed). */
export async function serveInvite(deps: TeamRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const body = parseWithSchema(inviteBody, await readJsonBody(request, deps.maxBodyBytes));
  const caller = await admin(deps, request, body.projectKey);
  const { invitation, ...handOver } = valueOf(await deps.team.invite(caller, body));
  return jsonResponse(201, { invitation: invitationJson(invitation), ...handOver });
}

/** `POST /sessions/team/invitations/revoke`. */
export async function serveRevokeInvitation(deps: TeamRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const body = parseWithSchema(revokeInvitationBody, await readJsonBody(request, deps.maxBodyBytes));
  const caller = await admin(deps, request, body.projectKey);
  valueOf(await deps.team.revokeInvitation(caller, body.id));
  return noContent();
}

/**
 * `POST /sessions/invitations/accept`: a signed-in invitee joins (200, the session as it is now); with
 * `name` and `password`, someone without an account gets one and is signed in (201 and the cookie).
 */
export async function serveAcceptInvitation(deps: TeamRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const body = parseWithSchema(acceptInvitationBody, await readJsonBody(request, deps.maxBodyBytes));
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
export async function serveMemberSessions(deps: TeamRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const query = parseWithSchema(memberSessionsQuery, queryOf(request));
  const caller = await admin(deps, request, query.projectKey);
  return jsonResponse(200, { sessions: valueOf(await deps.team.memberSessions(caller, query.userId)) });
}

/** `POST /sessions/team/sessions/revoke`: ends one of a member's sessions in the project, or all of them. */
export async function serveRevokeMemberSessions(
  deps: TeamRouteDependencies,
  request: HttpRequest,
): Promise<HttpResponse> {
  const body = parseWithSchema(revokeMemberSessionsBody, await readJsonBody(request, deps.maxBodyBytes));
  const caller = await admin(deps, request, body.projectKey);
  return jsonResponse(200, { revoked: valueOf(await deps.team.revokeMemberSessions(caller, body.userId, body.id)) });
}

/** `GET /sessions/organizations`: the organisations the signed-in user administers, each with its projects. */
export async function serveOrganizations(deps: TeamRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const organizations = await deps.team.organizations(cookieHeader(request));
  if (!organizations) throw noSessionError();
  return jsonResponse(200, { organizations });
}

/** `GET /sessions/team/policy?projectKey=…`: the project's role policy, and the flags it may name. */
export async function servePolicy(deps: TeamRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const query = parseWithSchema(teamQuery, queryOf(request));
  const caller = await admin(deps, request, query.projectKey);
  return jsonResponse(200, policyJson(deps, await deps.team.policy(caller)));
}

/** `POST /sessions/team/policy`: replaces the project's role policy (409 when it changed since `version`). */
export async function serveSetPolicy(deps: TeamRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const body = parseWithSchema(policyBody, await readJsonBody(request, deps.maxBodyBytes));
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
export async function serveCapabilities(deps: TeamRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
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
export async function serveAuditLog(deps: TeamRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const query = parseWithSchema(auditQuery, queryOf(request));
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

/** The query of `GET /sessions/team/audit/verify`: a head kept elsewhere (`expectSeq` and `expectHash`, both or neither). */
export const auditVerifyQuery = z.strictObject({
  projectKey: key,
  expectSeq: z.optional(z.string().check(z.regex(/^[1-9]\d{0,14}$/, 'Must be a record number'))),
  expectHash: z.optional(z.string().check(z.regex(/^[0-9a-f]{64}$/, 'Must be a SHA-256 hash in hex'))),
});

/**
 * `GET /sessions/team/audit/verify?projectKey=…`: walks the project's whole trail on any store — 200
 * with `ok: true` and its head, or `ok: false` naming the first record edited, missing, unchained or rewritten.
 */
export async function serveAuditVerify(deps: TeamRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const query = parseWithSchema(auditVerifyQuery, queryOf(request));
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
export async function serveAuditExport(deps: TeamRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const query = parseWithSchema(teamQuery, queryOf(request));
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
