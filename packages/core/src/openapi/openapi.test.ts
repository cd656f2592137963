import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import {
  conversationBranchBodySchema,
  conversationDeleteBodySchema,
  conversationListBodySchema,
  conversationUpdateBodySchema,
} from '../chat/handler/conversation-routes.js';
import { errorStatus } from '../errors/deskpilot-error.js';
import { loginBody, selectProjectBody } from '../session/session-routes.js';
import {
  emailVerificationRequestBody,
  passwordResetBody,
  passwordResetRequestBody,
  verifyEmailBody,
} from '../recovery/recovery-routes.js';
import { chatOpenApi, sessionOpenApi, type OpenApiDocument } from './openapi.js';

type Operation = { requestBody?: { content: Record<string, { schema: object }> }; responses: Record<string, unknown> };
const operation = (document: OpenApiDocument, path: string, method: string) =>
  (document.paths as Record<string, Record<string, Operation>>)[path]![method]!;

describe('the OpenAPI documents', () => {
  it.each([
    ['session', sessionOpenApi()],
    ['chat', chatOpenApi()],
  ])('the %s document is a valid OpenAPI 3.1 document', async (_name, document) => {
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes every route the handlers serve, and every error code in the problem schema', () => {
    const session = sessionOpenApi({ cookiePrefix: 'acme' });
    expect(Object.keys(session.paths as object)).toEqual([
      '/sessions',
      '/sessions/current',
      '/sessions/current/project',
      '/sessions/current/sessions',
      '/sessions/current/sessions/revoke',
      '/sessions/password-reset',
      '/sessions/password-reset/confirm',
      '/sessions/current/email-verification',
      '/sessions/email-verification/confirm',
      '/sessions/current/step-up/options',
      '/sessions/current/step-up',
      '/sessions/team/members',
      '/sessions/team/members/role',
      '/sessions/team/members/remove',
      '/sessions/team/invitations',
      '/sessions/team/invitations/revoke',
      '/sessions/invitations/accept',
      '/sessions/team/sessions',
      '/sessions/team/sessions/revoke',
      '/sessions/team/policy',
      '/sessions/current/capabilities',
      '/sessions/organizations',
      '/sessions/team/audit',
      '/sessions/team/audit/export',
      '/sessions/team/audit/verify',
      '/sessions/organizations/admins',
      '/sessions/organizations/admins/remove',
    ]);
    expect(Object.keys(chatOpenApi().paths as object)).toEqual([
      '/chat',
      '/chat/history',
      '/chat/conversations',
      '/chat/conversations/update',
      '/chat/conversations/delete',
      '/chat/conversations/branch',
      '/chat/{sessionId}/stream',
    ]);
    const problem = (session.components as { schemas: { Problem: { properties: { code: { enum: string[] } } } } })
      .schemas.Problem;
    expect(problem.properties.code.enum.sort()).toEqual(Object.keys(errorStatus).sort());
    expect(JSON.stringify(session.components)).toContain('"name":"acme_session"');
    expect(Object.keys(operation(session, '/sessions', 'post').responses)).toEqual(
      expect.arrayContaining(['201', '400', '401', '403', '413', '415', '429', '500', '503']),
    );
  });

  it('describes the request bodies the handlers validate: the JSON Schema and zod agree on every sample', () => {
    const ajv = new Ajv2020({ strict: false });
    const cases: Array<[z: { safeParse(value: unknown): { success: boolean } }, path: string, samples: unknown[]]> = [
      [
        loginBody,
        '/sessions',
        [
          { email: 'alice@example.com', password: 'pw' },
          { email: 'alice@example.com', password: 'pw', projectKey: 'acme-b2c' },
          { email: 'alice@example.com' },
          { email: '', password: 'pw' },
          { email: 'alice@example.com', password: 'pw', extra: true },
          { email: 'a'.repeat(321), password: 'pw' },
          'not an object',
        ],
      ],
      [
        selectProjectBody,
        '/sessions/current/project',
        [
          { projectKey: 'acme-b2b' },
          { projectKey: 'acme-b2b', clientId: 'acme' },
          {},
          { projectKey: '' },
          { projectKey: 'x', other: 1 },
        ],
      ],
      [
        passwordResetRequestBody,
        '/sessions/password-reset',
        [{ email: 'a@example.com' }, {}, { email: '' }, { email: 'a@example.com', other: 1 }],
      ],
      [
        passwordResetBody,
        '/sessions/password-reset/confirm',
        [{ token: 't', password: 'pw' }, { token: 't' }, { token: '', password: 'pw' }, { token: 't', password: '' }],
      ],
      [emailVerificationRequestBody, '/sessions/current/email-verification', [{}, { other: 1 }, []]],
      [verifyEmailBody, '/sessions/email-verification/confirm', [{ token: 't' }, {}, { token: 't'.repeat(201) }]],
    ];
    const id = crypto.randomUUID();
    // The conversation routes (the update's "title or archived" and the title's trimming are checks
    // JSON Schema does not express: not sampled here).
    cases.push(
      [
        conversationListBodySchema,
        '/chat/conversations',
        [
          {},
          { archived: true, limit: 5, cursor: 'abc' },
          { limit: 0 },
          { limit: 101 },
          { other: 1 },
          { archived: 'yes' },
        ],
      ],
      [
        conversationUpdateBodySchema,
        '/chat/conversations/update',
        [
          { sessionId: id, title: 'Refund' },
          { sessionId: id, archived: false },
          { title: 'x' },
          { sessionId: 'x', title: 'x' },
        ],
      ],
      [conversationDeleteBodySchema, '/chat/conversations/delete', [{ sessionId: id }, {}, { sessionId: id, x: 1 }]],
      [
        conversationBranchBodySchema,
        '/chat/conversations/branch',
        [{ sessionId: id, messageId: 'msg-1' }, { sessionId: id }, { sessionId: id, messageId: '' }],
      ],
    );
    for (const [schema, path, samples] of cases) {
      const document = path.startsWith('/chat') ? chatOpenApi() : sessionOpenApi();
      const validate = ajv.compile(operation(document, path, 'post').requestBody!.content['application/json']!.schema);
      for (const sample of samples)
        expect(validate(sample), `${path} ${JSON.stringify(sample)}`).toBe(schema.safeParse(sample).success);
    }
  });
});
