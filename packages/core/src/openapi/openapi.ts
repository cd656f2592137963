import type { $ZodType } from 'zod/v4/core';
import {
  assistantMessageSchema,
  chatBodySchema,
  historyBodySchema,
  userMessageSchema,
} from '../chat/handler/chat-request.js';
import {
  conversationBranchBodySchema,
  conversationDeleteBodySchema,
  conversationListBodySchema,
  conversationUpdateBodySchema,
} from '../chat/handler/conversation-routes.js';
import { errorStatus, errorTitle, type ErrorCode } from '../errors/deskpilot-error.js';
import { sessionSchema } from '../session/session-schema.js';
import { sessionListSchema, sessionRoutes } from '../session/session-api.js';
import { jsonSchemaOf, openApiPaths } from '../routes/route-open-api.js';
import type { RouteDeclaration } from '../routes/declare-route.js';
import { recoveryRoutes } from '../session/recovery-api.js';
import { passkeyRoutes } from '../session/passkey-api.js';
import { ssoRoutes } from '../session/sso-api.js';
import { stepUpRoutes } from '../session/step-up-api.js';
import {
  acceptInvitationBody,
  changeRoleBody,
  inviteBody,
  policyBody,
  removeMemberBody,
  revokeMemberSessionsBody,
  revokeInvitationBody,
} from '../team/team-routes.js';
import { addOrganizationAdminBody, removeOrganizationAdminBody } from '../team/organization-routes.js';

/** An OpenAPI 3.1 document, as plain JSON. */
export type OpenApiDocument = Record<string, unknown> & { openapi: '3.1.0' };

/** Options of {@link sessionOpenApi} and {@link chatOpenApi}. */
export interface OpenApiOptions {
  /** Where the service is reached, e.g. `https://sessions.example.com`. @default none (relative) */
  serverUrl?: string;
  /** The cookie prefix (`<prefix>_session`). @default "deskpilot" */
  cookiePrefix?: string;
}

/** A request body's JSON Schema from the zod schema the handler validates it with (its input side). */
const bodySchema = (schema: $ZodType) => jsonSchemaOf(schema, 'input');

/** The problem+json body, with every stable code. */
function problemSchema() {
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
    },
  };
}

/** The error answers of a route: one per status, each naming the codes it can carry. */
function problems(codes: readonly ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, 'internal' as const])
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

const json = (schema: unknown) => ({ 'application/json': { schema } });
const setCookie = {
  'Set-Cookie': {
    description:
      'The session cookie (HttpOnly, Secure unless configured off, SameSite=Lax); at sign-in also the device cookie (`<prefix>_device`).',
    schema: { type: 'string' },
  },
};

function document(
  title: string,
  description: string,
  options: OpenApiOptions,
  paths: object,
  components: object,
): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: { title, version: '1', description, license: { name: 'MIT', identifier: 'MIT' } },
    ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
    paths,
    components: {
      ...components,
      schemas: { Problem: problemSchema(), ...(components as { schemas?: object }).schemas },
    },
  };
}

/** What the session handler answers any route with: a write from a foreign origin, a route's missing session. */
function sessionHandlerErrors(route: RouteDeclaration): ErrorCode[] {
  return [
    ...(route.method === 'GET' ? [] : (['cross_site_request'] as const)),
    ...(route.auth === 'session' ? (['unauthenticated'] as const) : []),
  ];
}

/** The session service's routes (`createSessionHandler`) as an OpenAPI 3.1 document, from the schemas the handler validates with. */
export function sessionOpenApi(options: OpenApiOptions = {}): OpenApiDocument {
  const cookie = [{ sessionCookie: [] }];
  const session = { $ref: '#/components/schemas/Session' };
  const bodyCodes = [
    'invalid_request',
    'invalid_json',
    'payload_too_large',
    'unsupported_media_type',
    'cross_site_request',
  ] as const;
  const declared = (...groups: Array<Record<string, RouteDeclaration>>) =>
    openApiPaths(
      groups.flatMap((group) => Object.values(group)),
      { security: { session: cookie }, handlerErrors: sessionHandlerErrors },
    );
  const paths = {
    ...declared(sessionRoutes, recoveryRoutes, passkeyRoutes, ssoRoutes, stepUpRoutes),
    ...teamPaths(cookie, bodyCodes, session),
  };
  const components = {
    securitySchemes: {
      sessionCookie: { type: 'apiKey', in: 'cookie', name: `${options.cookiePrefix ?? 'deskpilot'}_session` },
    },
    schemas: { Session: jsonSchemaOf(sessionSchema, 'output') },
  };
  const description =
    'Sign-in, cookie sessions and the active project. State-changing requests must carry an allowed `Origin` (CSRF).';
  return document('Deskpilot session service', description, options, paths, components);
}

/** The answer listing sessions (a user's own, or a member's). */
const sessionListAnswer = {
  description: 'The sessions, oldest first.',
  content: json(jsonSchemaOf(sessionListSchema, 'output')),
};

/** An invitation as an admin sees it (never its token). */
const invitationSchema = {
  type: 'object',
  required: ['id', 'projectKey', 'clientId', 'role', 'email', 'invitedBy', 'createdAt', 'expiresAt'],
  properties: {
    id: { type: 'string' },
    projectKey: { type: 'string' },
    clientId: { type: 'string' },
    role: { type: 'string' },
    email: { type: 'string' },
    invitedBy: { type: 'string', description: 'The user id of the admin who invited.' },
    createdAt: { type: 'string', format: 'date-time' },
    expiresAt: { type: 'string', format: 'date-time' },
  },
};

/** A member of a project, with their memberships there. */
const memberSchema = {
  type: 'object',
  required: ['user', 'memberships'],
  properties: {
    user: {
      type: 'object',
      required: ['id', 'email', 'name'],
      properties: { id: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' } },
    },
    memberships: {
      type: 'array',
      items: {
        type: 'object',
        required: ['projectKey', 'clientId', 'role'],
        properties: { projectKey: { type: 'string' }, clientId: { type: 'string' }, role: { type: 'string' } },
      },
    },
  },
};

/** An audit record: its place in the project's hash chain, and what happened. */
const auditRecordSchema = {
  type: 'object',
  required: ['projectKey', 'seq', 'at', 'time', 'type', 'actor', 'session', 'subject', 'data', 'prevHash', 'hash'],
  properties: {
    projectKey: { type: 'string' },
    seq: { type: 'integer', description: "Its place in the project's chain, from 1." },
    at: { type: 'integer', description: 'Epoch milliseconds (what the hash covers).' },
    time: { type: 'string', format: 'date-time' },
    type: { type: 'string', description: '`sign-in`, `member-role-changed`, `invitation-created`…' },
    actor: { type: ['string', 'null'], description: 'The email of who did it; null for the system.' },
    session: { type: ['string', 'null'] },
    subject: { type: ['string', 'null'] },
    data: { type: 'object' },
    prevHash: { type: 'string' },
    hash: { type: 'string', description: 'SHA-256 (hex) over `prevHash` and every field but `time`.' },
  },
};

/** What the team routes' documents share. */
function teamRouteParts(cookie: object) {
  const admin = ['unauthenticated', 'forbidden', 'not_found', 'store_unavailable'] as const;
  const project = { name: 'projectKey', in: 'query', required: true, schema: { type: 'string' } };
  const query = (name: string, description: string, schema: object = { type: 'string' }) => ({
    name,
    in: 'query',
    required: false,
    description,
    schema,
  });
  const post = (operationId: string, summary: string, body: $ZodType, responses: object) => ({
    post: {
      operationId,
      summary,
      security: cookie,
      requestBody: { required: true, content: json(bodySchema(body)) },
      responses,
    },
  });
  const noContent = { '204': { description: 'Done.' } };
  return { admin, project, query, post, noContent };
}

/** The team routes, served when the session service has `team` (404 `not_found` otherwise). */
function teamPaths(cookie: object, bodyCodes: readonly ErrorCode[], session: object) {
  return {
    ...teamMemberPaths(cookie, bodyCodes),
    ...teamInvitationPaths(cookie, bodyCodes, session),
    ...teamSessionPaths(cookie, bodyCodes),
    ...teamPolicyPaths(cookie, bodyCodes),
    ...organizationPaths(cookie),
    ...organizationAdminPaths(cookie, bodyCodes),
    ...teamAuditPaths(cookie),
  };
}

/** Listing members, changing roles, removing members. */
function teamMemberPaths(cookie: object, bodyCodes: readonly ErrorCode[]) {
  const { admin, project, post, noContent } = teamRouteParts(cookie);
  return {
    '/sessions/team/members': {
      get: {
        operationId: 'teamMembers',
        summary: "A project's members, its roles and its pending invitations (its admins only).",
        security: cookie,
        parameters: [project],
        responses: {
          '200': {
            description: 'The team.',
            content: json({
              type: 'object',
              required: ['projectKey', 'roles', 'members', 'invitations'],
              properties: {
                projectKey: { type: 'string' },
                roles: { type: 'array', items: { type: 'string' } },
                members: { type: 'array', items: memberSchema },
                invitations: { type: 'array', items: invitationSchema },
              },
            }),
          },
          ...problems([...admin, 'invalid_request']),
        },
      },
    },
    '/sessions/team/members/role': post(
      'changeMemberRole',
      "Set a member's role; it takes effect on their next request. A project keeps at least one admin.",
      changeRoleBody,
      {
        '200': { description: 'The member as they are now.', content: json(memberSchema) },
        ...problems([...bodyCodes, ...admin, 'last_admin']),
      },
    ),
    '/sessions/team/members/remove': post(
      'removeMember',
      'Remove a member from the project: their sessions there end at their next request. A project keeps at least one admin.',
      removeMemberBody,
      { ...noContent, ...problems([...bodyCodes, ...admin, 'last_admin']) },
    ),
  };
}

/** Inviting, revoking and accepting. */
function teamInvitationPaths(cookie: object, bodyCodes: readonly ErrorCode[], session: object) {
  const { admin, post, noContent } = teamRouteParts(cookie);
  return {
    '/sessions/team/invitations': post(
      'invite',
      'Invite an address with a role: emailed when the service sends email, else the token is answered this once.',
      inviteBody,
      {
        '201': {
          description: 'Invited.',
          content: json({
            type: 'object',
            required: ['invitation'],
            properties: {
              invitation: invitationSchema,
              token: { type: 'string', description: 'Only when the invitation was not emailed: pass it on.' },
              link: { type: 'string', description: 'The invitation page with the token, when configured.' },
            },
          }),
        },
        ...problems([...bodyCodes, ...admin, 'conflict']),
      },
    ),
    '/sessions/team/invitations/revoke': post(
      'revokeInvitation',
      'Revoke a pending invitation.',
      revokeInvitationBody,
      {
        ...noContent,
        ...problems([...bodyCodes, ...admin]),
      },
    ),
    '/sessions/invitations/accept': {
      post: {
        operationId: 'acceptInvitation',
        summary:
          'Accept an invitation: signed in as the invited address (the token alone), or without an account (the token, a name and a password: the account is made and signed in).',
        requestBody: { required: true, content: json(bodySchema(acceptInvitationBody)) },
        responses: {
          '200': {
            description: 'Joined: the invitation and the session as it is now.',
            content: json({
              type: 'object',
              required: ['invitation', 'session'],
              properties: { invitation: invitationSchema, session },
            }),
          },
          '201': { description: 'A new account, signed in.', headers: setCookie, content: json(session) },
          ...problems([
            ...bodyCodes,
            'unauthenticated',
            'forbidden',
            'invalid_token',
            'conflict',
            'rate_limited',
            'store_unavailable',
            'unavailable',
          ]),
        },
      },
    },
  };
}

/** A member's sessions, listed and revoked. */
function teamSessionPaths(cookie: object, bodyCodes: readonly ErrorCode[]) {
  const { admin, project, post } = teamRouteParts(cookie);
  return {
    '/sessions/team/sessions': {
      get: {
        operationId: 'memberSessions',
        summary: "A member's live sessions in the project (its admins only).",
        security: cookie,
        parameters: [project, { name: 'userId', in: 'query', required: true, schema: { type: 'string' } }],
        responses: {
          '200': sessionListAnswer,
          ...problems([...admin, 'invalid_request']),
        },
      },
    },
    '/sessions/team/sessions/revoke': post(
      'revokeMemberSessions',
      "End one of a member's sessions in the project (`id`), or all of them.",
      revokeMemberSessionsBody,
      {
        '200': {
          description: 'How many ended.',
          content: json({ type: 'object', required: ['revoked'], properties: { revoked: { type: 'integer' } } }),
        },
        ...problems([...bodyCodes, ...admin]),
      },
    ),
  };
}

/** A project's role policy, and the capability flags a signed-in user has under it. */
function teamPolicyPaths(cookie: object, bodyCodes: readonly ErrorCode[]) {
  const { admin, project } = teamRouteParts(cookie);
  const flags = { type: 'object', additionalProperties: { type: 'boolean' } };
  const policy = {
    type: 'object',
    required: ['projectKey', 'roles', 'version', 'updatedAt', 'updatedBy', 'capabilities'],
    properties: {
      projectKey: { type: 'string' },
      roles: { type: 'object', additionalProperties: flags, description: 'Role → the flags it grants or withholds.' },
      version: { type: 'integer', description: '0 for the built-in policy.' },
      updatedAt: { type: ['string', 'null'], format: 'date-time' },
      updatedBy: { type: ['string', 'null'] },
      capabilities: {
        type: 'array',
        description: 'The flags a policy may name; a flag a role does not name: read on, write off.',
        items: {
          type: 'object',
          required: ['name', 'kind'],
          properties: { name: { type: 'string' }, kind: { enum: ['read', 'write'] } },
        },
      },
    },
  };
  return {
    '/sessions/team/policy': {
      get: {
        operationId: 'teamPolicy',
        summary: "The project's role policy (role → capability flags), and the flags it may name (its admins only).",
        security: cookie,
        parameters: [project],
        responses: {
          '200': { description: 'The policy.', content: json(policy) },
          ...problems([...admin, 'invalid_request']),
        },
      },
      post: {
        operationId: 'setTeamPolicy',
        summary:
          "Replace the project's role policy, from the version read (409 when it changed meanwhile); members have it on their next request.",
        security: cookie,
        requestBody: { required: true, content: json(bodySchema(policyBody)) },
        responses: {
          '200': { description: 'The policy stored.', content: json(policy) },
          ...problems([...bodyCodes, ...admin, 'conflict']),
        },
      },
    },
    '/sessions/current/capabilities': {
      get: {
        operationId: 'currentCapabilities',
        summary:
          "The signed-in user's capability flags in the active project, under its role policy now: what a chat context is built from.",
        security: cookie,
        responses: {
          '200': {
            description: 'The flags.',
            content: json({
              type: 'object',
              required: ['projectKey', 'role', 'capabilities', 'session'],
              properties: {
                projectKey: { type: 'string' },
                role: { type: 'string' },
                capabilities: flags,
                session: { $ref: '#/components/schemas/Session' },
              },
            }),
          },
          ...problems(['unauthenticated', 'store_unavailable', 'not_found']),
        },
      },
    },
  };
}

/** The organisations a signed-in user administers. */
function organizationPaths(cookie: object) {
  return {
    '/sessions/organizations': {
      get: {
        operationId: 'organizations',
        summary: 'The organisations the signed-in user administers, each with its projects (whose admin they are too).',
        security: cookie,
        responses: {
          '200': {
            description: 'The organisations, in key order.',
            content: json({
              type: 'object',
              required: ['organizations'],
              properties: {
                organizations: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['organization', 'projects'],
                    properties: {
                      organization: { type: 'string' },
                      projects: { type: 'array', items: { type: 'string' } },
                    },
                  },
                },
              },
            }),
          },
          ...problems(['unauthenticated', 'store_unavailable', 'not_found']),
        },
      },
    },
  };
}

/** An organisation's admins, seen and changed by its admins. */
function organizationAdminPaths(cookie: object, bodyCodes: readonly ErrorCode[]) {
  const { post, noContent } = teamRouteParts(cookie);
  const refused = ['unauthenticated', 'not_found', 'store_unavailable'] as const;
  const user = {
    type: 'object',
    required: ['id', 'email', 'name'],
    properties: { id: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' } },
  };
  return {
    '/sessions/organizations/admins': {
      get: {
        operationId: 'organizationAdmins',
        summary: "An organisation's admins (its admins only: anyone else gets 404, as for no such organisation).",
        security: cookie,
        parameters: [{ name: 'organization', in: 'query', required: true, schema: { type: 'string' } }],
        responses: {
          '200': {
            description: 'The admins, in user id order.',
            content: json({
              type: 'object',
              required: ['organization', 'admins'],
              properties: { organization: { type: 'string' }, admins: { type: 'array', items: user } },
            }),
          },
          ...problems([...refused, 'invalid_request']),
        },
      },
      ...post(
        'addOrganizationAdmin',
        "One of an organisation's admins makes a member of one of its projects (by their address) an admin of the organisation too; recorded in each of its projects' trails.",
        addOrganizationAdminBody,
        {
          '201': {
            description: 'The new admin.',
            content: json({
              type: 'object',
              required: ['organization', 'admin'],
              properties: { organization: { type: 'string' }, admin: user },
            }),
          },
          ...problems([...bodyCodes, ...refused]),
        },
      ),
    },
    '/sessions/organizations/admins/remove': post(
      'removeOrganizationAdmin',
      "One of an organisation's admins makes another, or themself, its admin no longer. An organisation keeps at least one admin.",
      removeOrganizationAdminBody,
      { ...noContent, ...problems([...bodyCodes, ...refused, 'last_admin']) },
    ),
  };
}

/** The audit trail, by page and whole. */
function teamAuditPaths(cookie: object) {
  const { admin, project, query } = teamRouteParts(cookie);
  return {
    '/sessions/team/audit': {
      get: {
        operationId: 'teamAudit',
        summary: "The project's audit trail, newest first, a page at a time (its admins only).",
        security: cookie,
        parameters: [
          project,
          query('actor', 'Only records by this actor (an email).'),
          query('type', 'Only records of this type.'),
          query('from', 'Only records at or after this time (ISO 8601).', { type: 'string', format: 'date-time' }),
          query('to', 'Only records before this time (ISO 8601).', { type: 'string', format: 'date-time' }),
          query('before', 'The next page: the `next` of the page before.'),
          query('limit', 'Records per page, 1 to 1000.', { type: 'string', default: '50' }),
        ],
        responses: {
          '200': {
            description: 'A page of records, and the cursor of the next (null at the end).',
            content: json({
              type: 'object',
              required: ['records', 'next'],
              properties: { records: { type: 'array', items: auditRecordSchema }, next: { type: ['string', 'null'] } },
            }),
          },
          ...problems([...admin, 'invalid_request']),
        },
      },
    },
    '/sessions/team/audit/export': {
      get: {
        operationId: 'exportTeamAudit',
        summary:
          "The project's whole audit trail as JSON lines, oldest first, each record with its hashes (its admins only).",
        security: cookie,
        parameters: [project],
        responses: {
          '200': {
            description: 'One audit record per line.',
            content: { 'application/x-ndjson': { schema: auditRecordSchema } },
          },
          ...problems([...admin, 'invalid_request']),
        },
      },
    },
    '/sessions/team/audit/verify': {
      get: {
        operationId: 'verifyTeamAudit',
        summary:
          "Walks the project's whole audit trail on any store: sound with its head, or the first record edited, missing, stored past the head or rewritten (its admins only).",
        security: cookie,
        parameters: [
          project,
          query('expectSeq', 'A head kept elsewhere: its record number (with expectHash).', {
            type: 'string',
            pattern: '^[1-9][0-9]{0,14}$',
          }),
          query('expectHash', 'A head kept elsewhere: its hash (with expectSeq).', {
            type: 'string',
            pattern: '^[0-9a-f]{64}$',
          }),
        ],
        responses: {
          '200': {
            description: 'What the walk found.',
            content: json(auditVerificationSchema),
          },
          ...problems([...admin, 'invalid_request', 'unavailable']),
        },
      },
    },
  };
}

/** What `GET /sessions/team/audit/verify` answers: the chain sound with its head, or its first broken record. */
const auditVerificationSchema = {
  oneOf: [
    {
      type: 'object',
      required: ['ok', 'projectKey', 'records', 'head'],
      properties: {
        ok: { const: true },
        projectKey: { type: 'string' },
        records: { type: 'integer' },
        head: {
          type: ['object', 'null'],
          required: ['projectKey', 'seq', 'hash', 'prunedThrough'],
          properties: {
            projectKey: { type: 'string' },
            seq: { type: 'integer' },
            hash: { type: 'string' },
            prunedThrough: { type: 'integer' },
          },
        },
      },
    },
    {
      type: 'object',
      required: ['ok', 'projectKey', 'seq', 'problem'],
      properties: {
        ok: { const: false },
        projectKey: { type: 'string' },
        seq: { type: 'integer' },
        problem: { enum: ['edited', 'missing', 'truncated', 'unchained', 'rewritten'] },
      },
    },
  ],
};

const turnStatus = { enum: ['complete', 'aborted', 'awaiting_approval', 'budget_exhausted', 'failed', null] };

/** What the routes on one conversation can answer. */
const conversationCodes: readonly ErrorCode[] = [
  'invalid_request',
  'invalid_json',
  'payload_too_large',
  'unsupported_media_type',
  'unauthenticated',
  'not_found',
  'conversation_deleted',
  'rate_limited',
  'store_unavailable',
  'unavailable',
];

/** A conversation as the conversation routes answer it (`preview` in the list only). */
function conversationSchema(withPreview: boolean) {
  const time = { type: 'string', format: 'date-time' };
  return {
    type: 'object',
    required: [
      'sessionId',
      'title',
      'status',
      'archived',
      'createdAt',
      'updatedAt',
      ...(withPreview ? ['preview'] : []),
    ],
    properties: {
      sessionId: { type: 'string', format: 'uuid' },
      title: { type: ['string', 'null'], description: 'Null until named, or titled from the first exchange.' },
      ...(withPreview
        ? { preview: { type: ['string', 'null'], description: 'The start of the last message’s text.' } }
        : {}),
      status: { ...turnStatus, description: 'How its last turn ended; null before the first.' },
      archived: { type: 'boolean' },
      createdAt: time,
      updatedAt: { ...time, description: 'The last activity: the list’s order.' },
    },
  };
}

/** A conversation as `/chat/history` and `/chat/conversations/branch` answer it. */
const historySchema = {
  type: 'object',
  required: ['sessionId', 'messages', 'siblings', 'lastTurnStatus', 'title', 'archived'],
  properties: {
    sessionId: { type: 'string', format: 'uuid' },
    messages: {
      type: 'array',
      items: { type: 'object', description: 'AI SDK UI message' },
      description: 'The active branch, first message first.',
    },
    siblings: {
      type: 'object',
      additionalProperties: { type: 'array', items: { type: 'string' }, minItems: 2 },
      description:
        'For each message of `messages` that has siblings (other edits of it, other answers to the same message): all their ids, itself included, oldest first.',
    },
    lastTurnStatus: turnStatus,
    title: { type: ['string', 'null'] },
    archived: { type: 'boolean' },
  },
};

/** `/chat/conversations` and its `/update`, `/branch` and `/delete`. */
function conversationPaths(rateLimit: Record<string, unknown>) {
  const route = (operationId: string, summary: string, body: $ZodType, answer: Record<string, unknown>) => ({
    post: {
      operationId,
      summary,
      requestBody: { required: true, content: json(bodySchema(body)) },
      responses: { ...answer, ...problems(conversationCodes) },
    },
  });
  return {
    '/chat/conversations': route(
      'listConversations',
      'The caller’s conversations in the project (or the archive), newest activity first, a page at a time.',
      conversationListBodySchema,
      {
        '200': {
          description: 'A page; `nextCursor` asks for the next one (null on the last page).',
          headers: rateLimit,
          content: json({
            type: 'object',
            required: ['conversations', 'nextCursor'],
            properties: {
              conversations: { type: 'array', items: conversationSchema(true) },
              nextCursor: { type: ['string', 'null'] },
            },
          }),
        },
      },
    ),
    '/chat/conversations/update': route(
      'updateConversation',
      'Rename, archive or bring back one of the caller’s conversations.',
      conversationUpdateBodySchema,
      {
        '200': {
          description: 'The conversation as it is now.',
          headers: rateLimit,
          content: json(conversationSchema(false)),
        },
      },
    ),
    '/chat/{sessionId}/stream': {
      get: {
        operationId: 'resumeChat',
        summary:
          'Re-attach to the conversation’s running answer (useChat `resume`): its stream from the first byte, then live; 204 when none runs.',
        parameters: [
          { name: 'sessionId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
          {
            name: 'x-deskpilot-context',
            in: 'header',
            required: false,
            description: 'The context’s JSON, base64url-encoded (`{ grant }`, or `userEmail` and `projectKey`).',
            schema: { type: 'string', maxLength: 8192 },
          },
        ],
        responses: {
          '200': {
            description: 'Server-sent events, as `POST /chat` sends them, from the answer’s first byte.',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          '204': { description: 'No answer runs: the conversation is complete in `/chat/history`.' },
          ...problems(conversationCodes),
        },
      },
    },
    '/chat/conversations/branch': route(
      'selectBranch',
      'Show another branch of one of the caller’s conversations: the one through `messageId` (a sibling `/chat/history` listed), down its newest messages. Later messages go on from there.',
      conversationBranchBodySchema,
      {
        '200': {
          description: 'The conversation with that branch active, as `/chat/history` answers it.',
          headers: rateLimit,
          content: json(historySchema),
        },
      },
    ),
    '/chat/conversations/delete': route(
      'deleteConversation',
      'Delete one of the caller’s conversations: its messages and notes go, a tombstone stays (later requests for it get 410).',
      conversationDeleteBodySchema,
      { '204': { description: 'Deleted.', headers: rateLimit } },
    ),
  };
}

/** The chat service's routes (`createChatHandler`) as an OpenAPI 3.1 document, from the schemas the handler validates with. */
export function chatOpenApi(options: OpenApiOptions = {}): OpenApiDocument {
  const message = { oneOf: [bodySchema(userMessageSchema(16_000)), bodySchema(assistantMessageSchema)] };
  const chatBody = bodySchema(chatBodySchema(200)) as { properties: Record<string, unknown> };
  chatBody.properties.messages = {
    type: 'array',
    minItems: 1,
    maxItems: 200,
    items: message,
    description:
      'AI SDK UI messages; only the last is read: a new user message, an edit (with `messageId` its id: a new branch beside it), or the last assistant message with approval answers. With the `regenerate-message` trigger the question is last: a new answer beside the stored one (`messageId`, when given, names the answer to replace), or, for a question never stored, an answer as to a new message.',
  };
  const rateLimit = { 'RateLimit-Policy': { schema: { type: 'string' } }, RateLimit: { schema: { type: 'string' } } };
  const paths = {
    '/chat': {
      post: {
        operationId: 'chat',
        summary: "Stream the assistant's answer: an AI SDK UI message stream (what `useChat` consumes).",
        requestBody: { required: true, content: json(chatBody) },
        responses: {
          '200': {
            description:
              'Server-sent events: `data: <UI message chunk JSON>` per chunk, `data: [DONE]` last. `finish` is sent once the turn is saved.',
            headers: { ...rateLimit, 'x-vercel-ai-ui-message-stream': { schema: { type: 'string', const: 'v1' } } },
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          ...problems([
            'invalid_request',
            'invalid_json',
            'payload_too_large',
            'quota_exceeded',
            'unsupported_media_type',
            'unauthenticated',
            'forbidden',
            'conflict',
            'conversation_deleted',
            'provider_unavailable',
            'rate_limited',
            'token_budget_exceeded',
            'store_unavailable',
            'unavailable',
          ]),
        },
      },
    },
    '/chat/history': {
      post: {
        operationId: 'chatHistory',
        summary: 'A conversation, to its owner only (an unknown id and someone else’s get the same 404).',
        requestBody: { required: true, content: json(bodySchema(historyBodySchema)) },
        responses: {
          '200': {
            description: 'The stored conversation’s active branch.',
            headers: rateLimit,
            content: json(historySchema),
          },
          ...problems(conversationCodes),
        },
      },
    },
    ...conversationPaths(rateLimit),
  };
  const description =
    'Assistant chat. Identity comes from `context` (a signed `context.grant` when the service has a context secret) or from the host session (`resolveContext`).';
  return document('Deskpilot chat service', description, options, paths, {});
}
