// Grants end with their session: the three services as real processes on one Postgres database, the
// chat service requiring signed grants. The page's grant works, the user logs out everywhere, and the
// same grant (signed, unexpired) is refused within the chat service's 5 s cache.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, readChunks, userMessage } from '../../test-support/chat-client.ts';
import { startPlatform, type Platform } from './platform.ts';

const databaseUrl = process.env.DATABASE_URL;
const secret = 'grant-revocation-test-secret-of-32-chars';

describe.skipIf(!databaseUrl)('a signed chat grant after log-out-everywhere (Postgres shared by the services)', () => {
  let platform: Platform;
  beforeAll(async () => {
    platform = await startPlatform(
      { CHAT_CONTEXT_SECRET: secret, DATABASE_URL: databaseUrl!, COOKIE_SECURE: 'false' },
      { DATABASE_URL: databaseUrl!, COOKIE_SECURE: 'false' },
    );
  }, 90_000);
  afterAll(() => platform?.close());

  it('is refused once its session has ended', async () => {
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
    // Within the chat service's cache (5 s) the grant may still pass; then it never does.
    let refused: Response | undefined;
    for (let attempt = 0; attempt < 40 && !refused; attempt++) {
      const response = await turn();
      if (response.status === 401) refused = response;
      else {
        expect(response.status).toBe(200);
        await readChunks(response);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    expect(refused, 'the grant was still accepted 10 s after log-out-everywhere').toBeDefined();
    expect(await refused!.json()).toMatchObject({ code: 'unauthenticated' });
  }, 60_000);
});
