// What the platform benches share: free ports for `npm start`, and a newcomer's first use of it.
import { createServer, type AddressInfo } from 'node:net';

/** A port nothing listens on now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A newcomer's first minute: sign in, read the session, one chat turn read to its end. */
export async function firstUse(ports: { session: number; chat: number; studio: number }): Promise<void> {
  const origin = `http://localhost:${ports.studio}`;
  const login = await fetch(`http://127.0.0.1:${ports.session}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ email: 'alice@example.com', password: 'alice-demo-password' }),
  });
  if (login.status !== 201) throw new Error(`sign-in: ${login.status} ${await login.text()}`);
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const current = await fetch(`http://127.0.0.1:${ports.session}/sessions/current`, { headers: { cookie } });
  if (current.status !== 200) throw new Error(`session: ${current.status}`);
  const turn = await fetch(`http://127.0.0.1:${ports.chat}/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({
      sessionId: crypto.randomUUID(),
      context: { userEmail: 'alice@example.com', projectKey: 'acme-b2c' },
      messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Show order ORD-1001' }] }],
    }),
  });
  const stream = await turn.text();
  if (turn.status !== 200 || !stream.includes('[DONE]'))
    throw new Error(`chat: ${turn.status} ${stream.slice(0, 300)}`);
}
