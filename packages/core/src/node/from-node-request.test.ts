import { Agent, createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { fromNodeRequest, type NodeRequestLike } from './from-node-request.js';

/** A real server handing each request to `onRequest`; closed when the test ends. */
async function serve(onRequest: (req: IncomingMessage) => void): Promise<number> {
  const server = createServer((req, res) => {
    onRequest(req);
    if (req.url !== '/hang') res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return (server.address() as AddressInfo).port;
}

function get(port: number, path: string, agent?: Agent): Promise<void> {
  return new Promise((resolve, reject) => {
    request({ port, path, agent }, (res) => res.resume().on('end', resolve))
      .on('error', reject)
      .end();
  });
}

const fake = (fields: Partial<NodeRequestLike>): NodeRequestLike => ({
  headers: {},
  socket: { remoteAddress: '198.51.100.7' },
  async *[Symbol.asyncIterator]() {
    yield new TextEncoder().encode('raw');
  },
  ...fields,
});

describe('fromNodeRequest', () => {
  it('reads method, path, headers and the client address', () => {
    const request = fromNodeRequest(
      fake({ method: 'DELETE', headers: { cookie: 'a=1', 'x-list': ['a', 'b'] } }),
      '/sessions/current',
    );
    expect([request.method, request.path, request.clientAddress]).toEqual([
      'DELETE',
      '/sessions/current',
      '198.51.100.7',
    ]);
    expect([request.headers.get('Cookie'), request.headers.get('x-list'), request.headers.get('missing')]).toEqual([
      'a=1',
      'a, b',
      null,
    ]);
    expect(fromNodeRequest(fake({}), '/', { clientAddress: '203.0.113.1' }).clientAddress).toBe('203.0.113.1');
  });

  it('has no body for GET and HEAD, and hands back a body a parser already read', async () => {
    expect(fromNodeRequest(fake({ method: 'GET' }), '/').body).toBeNull();
    expect(fromNodeRequest(fake({ method: 'HEAD' }), '/').body).toBeNull();
    const parsed = fromNodeRequest(fake({ method: 'POST', body: { a: 1 } }), '/').body as Iterable<Uint8Array>;
    expect(Buffer.concat([...parsed]).toString()).toBe('{"a":1}');
  });

  it('aborts its signal when the client closes the connection', async () => {
    const requests: IncomingMessage[] = [];
    const port = await serve((req) => requests.push(req));
    const client = request({ port, path: '/hang' }).on('error', () => {});
    client.end();
    await expect.poll(() => requests.length).toBe(1);
    const signal = fromNodeRequest(requests[0]!, '/hang').signal!;
    expect(signal.aborted).toBe(false);
    client.destroy();
    await expect.poll(() => signal.aborted).toBe(true);
    // A request read after its client left starts aborted.
    expect(fromNodeRequest(requests[0]!, '/hang').signal!.aborted).toBe(true);
  });

  it('adds one close listener per connection, however many requests a kept-alive connection carries', async () => {
    const signals: AbortSignal[] = [];
    const listeners: number[] = [];
    const port = await serve((req) => {
      signals.push(fromNodeRequest(req, '/').signal!);
      listeners.push(req.socket.listenerCount('close'));
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    onTestFinished(() => agent.destroy());
    for (let index = 0; index < 5; index++) await get(port, '/', agent);
    expect(new Set(listeners).size).toBe(1);
    expect(new Set(signals).size).toBe(1);
    expect(signals[0]!.aborted).toBe(false);
  });
});
