// Grants end with their session: the three services as real processes on one database (Postgres, or a
// SQLite file both services open), the chat service requiring signed grants. The page's grant works, the user logs out everywhere, and the
// same grant (signed, unexpired) is refused within the chat service's 5 s cache. A grant also holds no
// flag its member's role lost since it was signed — an approval answered the moment after the
// demotion runs nothing (approval answers never use the cache) — and ends when its member is removed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answeredCard, postJson, readChunks, userMessage } from '../../test-support/chat-client.ts';
import { startPlatform, type Platform } from './platform.ts';

const databaseUrl = process.env.DATABASE_URL;
const secret = 'grant-revocation-test-secret-of-32-chars';
// One SQLite file both services open, as `npm start` runs them (SHARED_SESSIONS on the chat service).
const sharedSqlite = () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'deskpilot-shared-'));
  return { DATA_DIR: dataDir, cleanup: () => rmSync(dataDir, { recursive: true, force: true }) };
};

describe.each([
  { database: 'Postgres', skip: !databaseUrl, shared: () => ({ DATABASE_URL: databaseUrl!, cleanup: () => {} }) },
  { database: 'one SQLite file', skip: false, shared: sharedSqlite },
])('a signed chat grant, the services sharing $database', ({ skip, shared }) => {
  let platform: Platform;
  let cleanup = () => {};
  beforeAll(async () => {
    if (skip) return;
    const { cleanup: remove, ...database } = shared();
    cleanup = remove;
    platform = await startPlatform(
      { CHAT_CONTEXT_SECRET: secret, SHARED_SESSIONS: 'true', COOKIE_SECURE: 'false', ...database },
      { COOKIE_SECURE: 'false', ...database },
    );
  }, 90_000);
  afterAll(() => {
    platform?.close();
    cleanup();
  });

  it.skipIf(skip)(
    'is refused once its session has ended',
    async () => {
      const origin = platform.studioUrl;
      const signedIn = await fetch(`${origin}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify({ email: 'alice@example.com', password: 'alice-demo-password' }),
      });
      expect(signedIn.status).toBe(201);
      const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
      const { context } = (await (await fetch(`${origin}/studio/chat-context`, { headers: { cookie } })).json()) as {
        context: { grant: string };
      };
      expect(context.grant).toBeTruthy();
      const turn = () =>
        postJson(platform.chat.url, '/chat', {
          sessionId: crypto.randomUUID(),
          context,
          messages: [userMessage('Show order ORD-1001')],
        });

      const before = await turn();
      expect(before.status).toBe(200);
      await readChunks(before);

      const loggedOut = await fetch(`${origin}/sessions`, { method: 'DELETE', headers: { cookie, origin } });
      expect(loggedOut.status).toBe(204);
      // Within the chat service's cache (5 s) the grant may still pass; past it, it never does.
      await new Promise((resolve) => setTimeout(resolve, 5_500));
      const refused = await turn();
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ code: 'unauthenticated' });
    },
    60_000,
  );

  it.skipIf(skip)(
    'holds no flag the member lost: demoted while a refund card waits, the held grant approves nothing; removed, it is refused',
    async () => {
      const origin = platform.studioUrl;
      const send = async (path: string, body: unknown, cookie?: string) =>
        fetch(`${origin}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin, ...(cookie ? { cookie } : {}) },
          body: JSON.stringify(body),
        });
      const cookieOf = (response: Response) => response.headers.get('set-cookie')!.split(';')[0]!;
      const admin = cookieOf(await send('/sessions', { email: 'alice@example.com', password: 'alice-demo-password' }));
      const bobIn = async () =>
        (
          (await (
            await fetch(`${origin}/sessions/team/members?projectKey=acme-b2c`, { headers: { cookie: admin } })
          ).json()) as { members: Array<{ user: { id: string; email: string } }> }
        ).members.find((member) => member.user.email === 'bob@example.com');
      // Bob (globex-b2c's viewer) joins acme-b2c as an admin; the database outlives test runs, so a
      // membership an earlier run left goes first.
      const left = await bobIn();
      if (left) await send('/sessions/team/members/remove', { projectKey: 'acme-b2c', userId: left.user.id }, admin);
      const signedIn = cookieOf(await send('/sessions', { email: 'bob@example.com', password: 'bob-demo-password' }));
      const invited = await send(
        '/sessions/team/invitations',
        { projectKey: 'acme-b2c', email: 'bob@example.com', role: 'admin' },
        admin,
      );
      expect(invited.status, await invited.clone().text()).toBe(201);
      const { token } = (await invited.json()) as { token: string };
      const joined = await send('/sessions/invitations/accept', { token }, signedIn);
      expect(joined.status, await joined.clone().text()).toBe(200);
      const switched = await send('/sessions/current/project', { projectKey: 'acme-b2c' }, signedIn);
      expect(switched.status).toBe(200);
      const bob = cookieOf(switched);
      const { context } = (await (
        await fetch(`${origin}/studio/chat-context`, { headers: { cookie: bob } })
      ).json()) as {
        context: { grant: string; canRefundOrders?: boolean };
      };
      expect(context.canRefundOrders).toBe(true);
      const sessionId = crypto.randomUUID();
      const question = userMessage('Refund order ORD-1001');
      const proposal = await readChunks(
        await postJson(platform.chat.url, '/chat', { sessionId, context, messages: [question] }),
      );
      expect(proposal.map((chunk) => chunk.type)).toContain('tool-approval-request');

      const bobId = (await bobIn())!.user.id;
      const demoted = await send(
        '/sessions/team/members/role',
        { projectKey: 'acme-b2c', userId: bobId, role: 'agent' },
        admin,
      );
      expect(demoted.status).toBe(200);
      // Approved at once, inside the chat service's 5 s cache of the session's flags (the proposal filled
      // it): an approval answer reads them now, and the grant Bob holds, which still says he may refund,
      // approves nothing.
      const answer = await readChunks(
        await postJson(platform.chat.url, '/chat', {
          sessionId,
          context,
          messages: [question, answeredCard(proposal, true)],
        }),
      );
      expect(answer.map((chunk) => chunk.type)).not.toContain('tool-output-available');
      expect(answer.map((chunk) => chunk.type)).toContain('tool-output-denied');

      const removed = await send('/sessions/team/members/remove', { projectKey: 'acme-b2c', userId: bobId }, admin);
      expect(removed.status).toBe(204);
      await new Promise((resolve) => setTimeout(resolve, 5_500));
      const refused = await postJson(platform.chat.url, '/chat', {
        sessionId: crypto.randomUUID(),
        context,
        messages: [userMessage('Show order ORD-1001')],
      });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ code: 'unauthenticated' });
    },
    60_000,
  );
});
