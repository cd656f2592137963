import * as z from 'zod/mini';
import { described, isoTime } from '../routes/answer-schemas.js';
import { declareRoute } from '../routes/declare-route.js';
import { sessionSchema } from '../session/session-schema.js';
import { sessionListSchema } from '../session/session-api.js';
import { isValidText } from '../validation/valid-text.js';

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
const flagsInput = z.record(z.string().check(z.maxLength(100)), z.boolean());
/** The body of `POST /sessions/team/policy`: every role's flags, and the version they replace (0: the built-in policy). */
export const policyBody = z.strictObject({
  projectKey: key,
  roles: z.record(z.string().check(z.minLength(1), z.maxLength(100)), flagsInput),
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
const isoTimeInput = z.string().check(
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
  actor: z.optional(text(320).check(z.describe('Only records by this actor (an email).'))),
  type: z.optional(text(100).check(z.describe('Only records of this type.'))),
  from: z.optional(isoTimeInput.check(z.describe('Only records at or after this time (ISO 8601).'))),
  to: z.optional(isoTimeInput.check(z.describe('Only records before this time (ISO 8601).'))),
  before: z.optional(whole(Number.MAX_SAFE_INTEGER).check(z.describe('The next page: the `next` of the page before.'))),
  limit: z.optional(whole(1000).check(z.describe('Records per page, 1 to 1000 (50 when absent).'))),
});

/** The query of `GET /sessions/team/audit/verify`: a head kept elsewhere (`expectSeq` and `expectHash`, both or neither). */
export const auditVerifyQuery = z.strictObject({
  projectKey: key,
  expectSeq: z.optional(
    z
      .string()
      .check(
        z.regex(/^[1-9]\d{0,14}$/, 'Must be a record number'),
        z.describe('A head kept elsewhere: its record number (with expectHash).'),
      ),
  ),
  expectHash: z.optional(
    z
      .string()
      .check(
        z.regex(/^[0-9a-f]{64}$/, 'Must be a SHA-256 hash in hex'),
        z.describe('A head kept elsewhere: its hash (with expectSeq).'),
      ),
  ),
});

/** The query of `GET /sessions/organizations/admins`. */
export const organizationQuery = z.strictObject({ organization: key });
/** The body of `POST /sessions/organizations/admins`: an account's address. */
export const addOrganizationAdminBody = z.strictObject({ organization: key, email });
/** The body of `POST /sessions/organizations/admins/remove`. */
export const removeOrganizationAdminBody = z.strictObject({ organization: key, userId: key });

const user = z.object({ id: z.string(), email: z.string(), name: z.string() });

/** A member of a project, with their memberships there. */
export const memberSchema = z.object({
  user,
  memberships: z.array(z.object({ projectKey: z.string(), clientId: z.string(), role: z.string() })),
});

/** An invitation as an admin sees it (never its token). */
export const invitationSchema = z.object({
  id: z.string(),
  projectKey: z.string(),
  clientId: z.string(),
  role: z.string(),
  email: z.string(),
  invitedBy: described(z.string(), 'The user id of the admin who invited.'),
  createdAt: isoTime(),
  expiresAt: isoTime(),
});

/** An audit record: its place in the project's hash chain, and what happened. */
export const auditRecordSchema = z.object({
  projectKey: z.string(),
  seq: described(z.int(), "Its place in the project's chain, from 1."),
  at: described(z.int(), 'Epoch milliseconds (what the hash covers).'),
  time: isoTime(),
  type: described(z.string(), '`sign-in`, `member-role-changed`, `invitation-created`…'),
  actor: described(z.nullable(z.string()), 'The email of who did it; null for the system.'),
  session: z.nullable(z.string()),
  subject: z.nullable(z.string()),
  data: z.record(z.string(), z.unknown()),
  prevHash: z.string(),
  hash: described(z.string(), 'SHA-256 (hex) over `prevHash` and every field but `time`.'),
});

/** What `GET /sessions/team/audit/verify` answers: the chain sound with its head, or its first broken record. */
export const auditVerificationSchema = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    projectKey: z.string(),
    records: z.int(),
    head: z.nullable(z.object({ projectKey: z.string(), seq: z.int(), hash: z.string(), prunedThrough: z.int() })),
  }),
  z.object({
    ok: z.literal(false),
    projectKey: z.string(),
    seq: z.int(),
    problem: z.enum(['edited', 'missing', 'truncated', 'unchained', 'rewritten']),
  }),
]);

const flags = z.record(z.string(), z.boolean());

/** A project's role policy, with the flags it may name. */
export const policySchema = z.object({
  projectKey: z.string(),
  roles: described(z.record(z.string(), flags), 'Role → the flags it grants or withholds.'),
  version: described(z.int(), '0 for the built-in policy.'),
  updatedAt: z.nullable(isoTime()),
  updatedBy: z.nullable(z.string()),
  capabilities: described(
    z.array(z.object({ name: z.string(), kind: z.enum(['read', 'write']) })),
    'The flags a policy may name; a flag a role does not name: read on, write off.',
  ),
});

const admin = ['forbidden', 'sso_required', 'not_found', 'store_unavailable'] as const;
const done = { status: 204, description: 'Done.' } as const;

/** The team routes, served when the session service has `team` (404 `not_found` otherwise). */
export const teamRoutes = {
  teamMembers: declareRoute({
    operationId: 'teamMembers',
    method: 'GET',
    path: '/sessions/team/members',
    summary: "A project's members, its roles and its pending invitations (its admins only).",
    auth: 'session',
    query: teamQuery,
    answer: {
      status: 200,
      description: 'The team.',
      schema: z.object({
        projectKey: z.string(),
        roles: z.array(z.string()),
        members: z.array(memberSchema),
        invitations: z.array(invitationSchema),
      }),
    },
    errors: admin,
  }),
  changeMemberRole: declareRoute({
    operationId: 'changeMemberRole',
    method: 'POST',
    path: '/sessions/team/members/role',
    summary: "Set a member's role; it takes effect on their next request. A project keeps at least one admin.",
    auth: 'session',
    body: changeRoleBody,
    answer: { status: 200, description: 'The member as they are now.', schema: memberSchema },
    errors: [...admin, 'last_admin'],
  }),
  removeMember: declareRoute({
    operationId: 'removeMember',
    method: 'POST',
    path: '/sessions/team/members/remove',
    summary:
      'Remove a member from the project: their sessions there end at their next request. A project keeps at least one admin.',
    auth: 'session',
    body: removeMemberBody,
    answer: done,
    errors: [...admin, 'last_admin'],
  }),
  invite: declareRoute({
    operationId: 'invite',
    method: 'POST',
    path: '/sessions/team/invitations',
    summary:
      'Invite an address with a role: emailed when the service sends email, else the token is answered this once.',
    auth: 'session',
    body: inviteBody,
    answer: {
      status: 201,
      description: 'Invited.',
      schema: z.object({
        invitation: invitationSchema,
        token: z.optional(described(z.string(), 'Only when the invitation was not emailed: pass it on.')),
        link: z.optional(described(z.string(), 'The invitation page with the token, when configured.')),
      }),
    },
    errors: [...admin, 'conflict'],
  }),
  revokeInvitation: declareRoute({
    operationId: 'revokeInvitation',
    method: 'POST',
    path: '/sessions/team/invitations/revoke',
    summary: 'Revoke a pending invitation.',
    auth: 'session',
    body: revokeInvitationBody,
    answer: done,
    errors: admin,
  }),
  acceptInvitation: declareRoute({
    operationId: 'acceptInvitation',
    method: 'POST',
    path: '/sessions/invitations/accept',
    summary:
      "Accept an invitation: signed in as the invited address (the token alone), or without an account (the token, a name and a password: the account is made and signed in; 403 `sso_required` when the project's organisation signs its members in at its identity provider, the account made).",
    auth: 'none',
    body: acceptInvitationBody,
    answer: {
      status: 200,
      description: 'Joined: the invitation and the session as it is now.',
      schema: z.object({ invitation: invitationSchema, session: sessionSchema }),
    },
    otherAnswer: {
      status: 201,
      description: 'A new account, signed in.',
      schema: sessionSchema,
      component: 'Session',
      headers: ['set-cookie'],
    },
    errors: [
      'unauthenticated',
      'forbidden',
      'sso_required',
      'invalid_token',
      'conflict',
      'rate_limited',
      'store_unavailable',
      'unavailable',
    ],
  }),
  memberSessions: declareRoute({
    operationId: 'memberSessions',
    method: 'GET',
    path: '/sessions/team/sessions',
    summary: "A member's live sessions in the project (its admins only).",
    auth: 'session',
    query: memberSessionsQuery,
    answer: { status: 200, description: 'The sessions, oldest first.', schema: sessionListSchema },
    errors: admin,
  }),
  revokeMemberSessions: declareRoute({
    operationId: 'revokeMemberSessions',
    method: 'POST',
    path: '/sessions/team/sessions/revoke',
    summary: "End one of a member's sessions in the project (`id`), or all of them.",
    auth: 'session',
    body: revokeMemberSessionsBody,
    answer: { status: 200, description: 'How many ended.', schema: z.object({ revoked: z.int() }) },
    errors: admin,
  }),
  teamPolicy: declareRoute({
    operationId: 'teamPolicy',
    method: 'GET',
    path: '/sessions/team/policy',
    summary: "The project's role policy (role → capability flags), and the flags it may name (its admins only).",
    auth: 'session',
    query: teamQuery,
    answer: { status: 200, description: 'The policy.', schema: policySchema },
    errors: admin,
  }),
  setTeamPolicy: declareRoute({
    operationId: 'setTeamPolicy',
    method: 'POST',
    path: '/sessions/team/policy',
    summary:
      "Replace the project's role policy, from the version read (409 when it changed meanwhile); members have it on their next request.",
    auth: 'session',
    body: policyBody,
    answer: { status: 200, description: 'The policy stored.', schema: policySchema },
    errors: [...admin, 'conflict'],
  }),
  currentCapabilities: declareRoute({
    operationId: 'currentCapabilities',
    method: 'GET',
    path: '/sessions/current/capabilities',
    summary:
      "The signed-in user's capability flags in the active project, under its role policy now: what a chat context is built from.",
    auth: 'session',
    answer: {
      status: 200,
      description: 'The flags.',
      schema: z.object({ projectKey: z.string(), role: z.string(), capabilities: flags, session: sessionSchema }),
    },
    errors: ['store_unavailable', 'not_found'],
  }),
  organizations: declareRoute({
    operationId: 'organizations',
    method: 'GET',
    path: '/sessions/organizations',
    summary: 'The organisations the signed-in user administers, each with its projects (whose admin they are too).',
    auth: 'session',
    answer: {
      status: 200,
      description: 'The organisations, in key order.',
      schema: z.object({
        organizations: z.array(z.object({ organization: z.string(), projects: z.array(z.string()) })),
      }),
    },
    errors: ['store_unavailable', 'not_found'],
  }),
  teamAudit: declareRoute({
    operationId: 'teamAudit',
    method: 'GET',
    path: '/sessions/team/audit',
    summary: "The project's audit trail, newest first, a page at a time (its admins only).",
    auth: 'session',
    query: auditQuery,
    answer: {
      status: 200,
      description: 'A page of records, and the cursor of the next (null at the end).',
      schema: z.object({ records: z.array(auditRecordSchema), next: z.nullable(z.string()) }),
    },
    errors: admin,
  }),
  exportTeamAudit: declareRoute({
    operationId: 'exportTeamAudit',
    method: 'GET',
    path: '/sessions/team/audit/export',
    summary:
      "The project's whole audit trail as JSON lines, oldest first, each record with its hashes (its admins only).",
    auth: 'session',
    query: teamQuery,
    answer: {
      status: 200,
      description: 'One audit record per line.',
      contentType: 'application/x-ndjson',
      schema: auditRecordSchema,
    },
    errors: admin,
  }),
  verifyTeamAudit: declareRoute({
    operationId: 'verifyTeamAudit',
    method: 'GET',
    path: '/sessions/team/audit/verify',
    summary:
      "Walks the project's whole audit trail on any store: sound with its head, or the first record edited, missing, stored past the head or rewritten (its admins only).",
    auth: 'session',
    query: auditVerifyQuery,
    answer: { status: 200, description: 'What the walk found.', schema: auditVerificationSchema },
    errors: [...admin, 'unavailable'],
  }),
};

/** An organisation's admins, seen and changed by its admins (served with the team routes). */
export const organizationRoutes = {
  organizationAdmins: declareRoute({
    operationId: 'organizationAdmins',
    method: 'GET',
    path: '/sessions/organizations/admins',
    summary: "An organisation's admins (its admins only: anyone else gets 404, as for no such organisation).",
    auth: 'session',
    query: organizationQuery,
    answer: {
      status: 200,
      description: 'The admins, in user id order.',
      schema: z.object({ organization: z.string(), admins: z.array(user) }),
    },
    errors: ['not_found', 'store_unavailable'],
  }),
  addOrganizationAdmin: declareRoute({
    operationId: 'addOrganizationAdmin',
    method: 'POST',
    path: '/sessions/organizations/admins',
    summary:
      "One of an organisation's admins makes a member of one of its projects (by their address) an admin of the organisation too; recorded in each of its projects' trails.",
    auth: 'session',
    body: addOrganizationAdminBody,
    answer: {
      status: 201,
      description: 'The new admin.',
      schema: z.object({ organization: z.string(), admin: user }),
    },
    errors: ['not_found', 'store_unavailable'],
  }),
  removeOrganizationAdmin: declareRoute({
    operationId: 'removeOrganizationAdmin',
    method: 'POST',
    path: '/sessions/organizations/admins/remove',
    summary:
      "One of an organisation's admins makes another, or themself, its admin no longer. An organisation keeps at least one admin.",
    auth: 'session',
    body: removeOrganizationAdminBody,
    answer: { status: 204, description: 'Done.' },
    errors: ['not_found', 'store_unavailable', 'last_admin'],
  }),
};
