import { chatRoutes } from '@deskpilot/core/chat-routes';
import { teamRoutes } from '@deskpilot/core/routes';
import { usageRoutes } from '@deskpilot/usage/routes';
import { describe, expect, it } from 'vitest';
import { callRoute, routeUrl } from './route-calls.js';

describe('calls derived from route declarations', () => {
  it('puts a GET’s fields in its query (undefined ones left out) and a path parameter in its path', () => {
    expect(routeUrl(teamRoutes.teamAudit, { projectKey: 'acme b2c', actor: undefined, limit: '5' })).toEqual({
      url: '/sessions/team/audit?projectKey=acme+b2c&limit=5',
      rest: {},
    });
    expect(routeUrl(chatRoutes.resumeChat, { sessionId: 'a/b' }).url).toBe('/chat/a%2Fb/stream');
    for (const sessionId of [undefined, '', '.', '..'])
      expect(() => routeUrl(chatRoutes.resumeChat, { sessionId })).toThrow(/sessionId must be a non-empty string/);
  });

  it('sends a write’s fields as its JSON body, and answers nothing for an answer without a body', async () => {
    const sent: Array<{ url: string; init: RequestInit }> = [];
    const send = async (url: string, init: RequestInit) => {
      sent.push({ url, init });
      return url.endsWith('/remove')
        ? new Response(null, { status: 204 })
        : Response.json({ user: { id: 'u1' } }, { status: 200 });
    };
    expect(await callRoute(send, 'https://desk.test', teamRoutes.removeMember, { projectKey: 'p', userId: 'u' })).toBe(
      undefined,
    );
    expect(sent[0]).toEqual({
      url: 'https://desk.test/sessions/team/members/remove',
      init: {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"projectKey":"p","userId":"u"}',
      },
    });
    expect(
      await callRoute(send, '', teamRoutes.changeMemberRole, { projectKey: 'p', userId: 'u', role: 'agent' }),
    ).toEqual({ user: { id: 'u1' } });
  });

  it('answers a route declared to answer text (a CSV export) with the text', async () => {
    const csv = 'tool,calls\r\ngetOrder,7\r\n';
    const send = async () => new Response(csv, { headers: { 'content-type': 'text/csv; charset=utf-8' } });
    const input = { from: '2026-11-01', to: '2026-11-30', by: 'tool' } as const;
    const text: string = await callRoute(send, '', usageRoutes.exportUsage, input);
    expect(text).toBe(csv);
  });
});
