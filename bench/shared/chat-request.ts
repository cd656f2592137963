// One `POST /chat` over a keep-alive agent, read to its end: what the chat benchmarks' load clients send.
import { randomUUID } from 'node:crypto';
import { request as httpRequest, type Agent } from 'node:http';

/** A `POST /chat` body as the browser client sends it: one user message, in a new conversation. */
export function newConversationBody(userEmail: string): string {
  return JSON.stringify({
    messages: [
      { id: `msg-${randomUUID()}`, role: 'user', parts: [{ type: 'text', text: 'Where is my order ORD-1001?' }] },
    ],
    sessionId: randomUUID(),
    context: { userEmail, projectKey: 'acme-b2c' },
  });
}

/**
 * Posts `body` to `/chat` on `port`: `opened` once the first bytes arrived, `done` once the stream
 * ended — rejected unless it is a 200 that ends in `data: [DONE]`, or when it takes over `timeoutMs`.
 */
export function postChat(port: number, agent: Agent, body: string, timeoutMs = 120_000) {
  let opened!: () => void;
  const openedPromise = new Promise<void>((resolve) => (opened = resolve));
  const done = new Promise<void>((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/chat',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        let tail = '';
        response.on('data', (chunk: Buffer) => {
          opened();
          tail = (tail + chunk.toString('latin1')).slice(-64);
        });
        response.on('end', () =>
          response.statusCode === 200 && tail.trimEnd().endsWith('data: [DONE]')
            ? resolve()
            : reject(new Error(`POST /chat answered ${response.statusCode}, ending ${JSON.stringify(tail)}`)),
        );
        response.on('error', reject);
      },
    );
    request.setTimeout(timeoutMs, () => request.destroy(new Error(`a stream took over ${timeoutMs} ms`)));
    request.on('error', reject);
    request.end(body);
  });
  return { opened: openedPromise, done };
}
