import { createServer, type IncomingHttpHeaders, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { describe, expect, it, onTestFinished } from 'vitest';
import { toFetchResponse, type HttpRequest } from '../http/http-request.js';
import { forwardRequest } from './forward-request.js';

/** A real upstream on an ephemeral loopback port, closed when the test ends. */
async function upstream(listener: RequestListener): Promise<string> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An upstream that records what reached it and answers 200 `ok`. */
async function recordingUpstream() {
  const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = [];
  const url = await upstream((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  return { url, seen };
}

/** A loopback port nothing listens on (not port 9: fetch refuses it before trying). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const encoder = new TextEncoder();

function request(method: string, options: { body?: string[]; signal?: AbortSignal } = {}): HttpRequest {
  return {
    method,
    path: '/',
    headers: new Headers(),
    body: options.body
      ? (async function* () {
          for (const chunk of options.body!) yield encoder.encode(chunk);
        })()
      : null,
    signal: options.signal,
  };
}

const problemCode = async (response: Awaited<ReturnType<typeof forwardRequest>>) => [
  response.status,
  (await toFetchResponse(response).json()).code,
];

describe('forwardRequest', () => {
  it('sends method, path, query, streamed body and end-to-end headers under the target path', async () => {
    const { url, seen } = await recordingUpstream();
    const response = await forwardRequest(request('POST', { body: ['{"a":', '1}'] }), {
      target: `${url}/v1/`,
      path: '/orders?status=open',
      headers: {
        'content-type': 'application/json',
        'x-request-id': ['r-1', 'r-2'],
        connection: 'keep-alive, x-hop',
        'x-hop': 'no',
        'keep-alive': 'timeout=5',
        expect: '100-continue',
        'accept-encoding': 'gzip',
        gone: undefined,
      },
    });
    expect(response.status).toBe(200);
    expect(await toFetchResponse(response).text()).toBe('ok');
    expect(seen).toMatchObject([{ method: 'POST', url: '/v1/orders?status=open', body: '{"a":1}' }]);
    const headers = seen[0]!.headers;
    expect(headers).toMatchObject({
      'content-type': 'application/json',
      'x-request-id': 'r-1, r-2',
      'accept-encoding': 'identity',
    });
    for (const name of ['x-hop', 'keep-alive', 'expect', 'gone']) expect(headers[name], name).toBeUndefined();
  });

  it('never lets the client path name another host', async () => {
    const { url, seen } = await recordingUpstream();
    for (const path of ['//elsewhere.example/steal?x=1', '@elsewhere.example/', '\\\\elsewhere.example/']) {
      const response = await forwardRequest(request('GET'), { target: url, path, headers: {} });
      expect(response.status, path).toBe(200);
    }
    await forwardRequest(request('GET'), { target: `${url}/v1`, path: '//elsewhere.example:80/steal', headers: {} });
    expect(seen.map((call) => call.url)).toEqual([
      '//elsewhere.example/steal?x=1',
      '/@elsewhere.example/',
      '///elsewhere.example/',
      '/v1//elsewhere.example:80/steal',
    ]);
  });

  it("never lets the client path climb above the target's path: dot segments that leave it are a 404, with no call", async () => {
    const { url, seen } = await recordingUpstream();
    for (const path of ['/../admin', '/%2e%2e/admin', '/x/%2E%2E/%2e%2e/admin?y=1', '/..', '/.%2e/metrics']) {
      const response = await forwardRequest(request('GET'), { target: `${url}/v1`, path, headers: {} });
      expect(await problemCode(response), path).toEqual([404, 'not_found']);
    }
    expect(seen).toEqual([]);
    // Within the target's path, a dot segment is resolved as the upstream would.
    await forwardRequest(request('GET'), { target: `${url}/v1`, path: '/a/../b?z=1', headers: {} });
    expect(seen.map((call) => call.url)).toEqual(['/v1/b?z=1']);
  });

  it('relays status, headers and each Set-Cookie apart, and a redirect as it is, never followed', async () => {
    const url = await upstream((_req, res) => {
      res.setHeader('set-cookie', ['a=1; Expires=Thu, 01 Jan 2099 00:00:00 GMT', 'b=2']);
      res
        .writeHead(302, {
          location: 'http://elsewhere.example/',
          'x-upstream': 'yes',
          connection: 'x-secret',
          'x-secret': 'hop',
        })
        .end();
    });
    const response = await forwardRequest(request('GET'), { target: url, path: '/', headers: {} });
    expect(response.status).toBe(302);
    expect(response.headers.filter(([name]) => name === 'set-cookie')).toEqual([
      ['set-cookie', 'a=1; Expires=Thu, 01 Jan 2099 00:00:00 GMT'],
      ['set-cookie', 'b=2'],
    ]);
    const names = response.headers.map(([name]) => name);
    expect(names).toContain('x-upstream');
    expect(response.headers).toContainEqual(['location', 'http://elsewhere.example/']);
    for (const name of ['connection', 'x-secret', 'keep-alive', 'transfer-encoding']) expect(names).not.toContain(name);
  });

  it('answers 502 upstream_unavailable when the upstream is unreachable', async () => {
    const response = await forwardRequest(request('POST', { body: ['{}'] }), {
      target: `http://127.0.0.1:${await closedPort()}`,
      path: '/',
      headers: {},
    });
    expect(response.headers).toContainEqual(['content-type', 'application/problem+json']);
    expect(await problemCode(response)).toEqual([502, 'upstream_unavailable']);
  });

  it('answers 502 upstream_unavailable when the upstream accepts but never answers', async () => {
    const url = await upstream(() => {});
    const response = await forwardRequest(request('GET'), { target: url, path: '/', headers: {}, timeoutMs: 50 });
    expect(await problemCode(response)).toEqual([502, 'upstream_unavailable']);
  });

  it('cuts the body for the client when the upstream dies mid-body', async () => {
    const url = await upstream((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('{"partial":');
      setImmediate(() => res.socket?.destroy());
    });
    const response = await forwardRequest(request('GET'), { target: url, path: '/', headers: {} });
    expect(response.status).toBe(200);
    await expect(toFetchResponse(response).text()).rejects.toThrow();
  });

  it('cuts the body when the upstream goes silent mid-body, but waits on a client that reads slowly', async () => {
    const url = await upstream((req, res) => {
      res.writeHead(200);
      res.write('first ');
      if (req.url === '/slow-reader') setTimeout(() => res.end('second'), 20);
    });
    const silent = await forwardRequest(request('GET'), { target: url, path: '/silent', headers: {}, timeoutMs: 50 });
    await expect(toFetchResponse(silent).text()).rejects.toThrow();

    const slow = await forwardRequest(request('GET'), {
      target: url,
      path: '/slow-reader',
      headers: {},
      timeoutMs: 50,
    });
    const reader = (slow.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('first ');
    // Four times the timeout between two reads: the pause is ours, not the upstream's.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('second');
    expect((await reader.read()).done).toBe(true);
  });

  it('abandons the upstream call when the client goes away, before or during the answer', async () => {
    const closed: string[] = [];
    let arrived = () => {};
    const url = await upstream((req, res) => {
      res.on('close', () => closed.push(req.url!));
      if (req.url === '/streaming') res.writeHead(200).write('chunk');
      arrived();
    });
    const waiting = new AbortController();
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const pending = forwardRequest(request('GET', { signal: waiting.signal }), {
      target: url,
      path: '/waiting',
      headers: {},
    });
    await reached;
    waiting.abort();
    expect(await problemCode(await pending)).toEqual([502, 'upstream_unavailable']);
    await expect.poll(() => closed).toEqual(['/waiting']);

    const streaming = new AbortController();
    const response = await forwardRequest(request('GET', { signal: streaming.signal }), {
      target: url,
      path: '/streaming',
      headers: {},
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    streaming.abort();
    await expect(reader.read()).rejects.toThrow();
    await expect.poll(() => closed).toEqual(['/waiting', '/streaming']);
  });

  it('abandons the upstream call when the client cancels the relayed body', async () => {
    const closed: string[] = [];
    const url = await upstream((req, res) => {
      res.on('close', () => closed.push(req.url!));
      res.writeHead(200).write('chunk');
    });
    const response = await forwardRequest(request('GET'), { target: url, path: '/cancelled', headers: {} });
    await (response.body as ReadableStream<Uint8Array>).cancel();
    await expect.poll(() => closed).toEqual(['/cancelled']);
  });

  it('relays a compressed answer decoded, without its coding; refuses a coding it cannot tell was decoded', async () => {
    const url = await upstream((req, res) => {
      // An upstream that ignores `Accept-Encoding: identity`.
      if (req.url === '/gzip') res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync('hello'));
      else res.writeHead(200, { 'content-encoding': 'compress' }).end('?');
    });
    const gzip = await forwardRequest(request('GET'), { target: url, path: '/gzip', headers: {} });
    expect(gzip.headers.map(([name]) => name)).not.toContain('content-encoding');
    expect(gzip.headers.map(([name]) => name)).not.toContain('content-length');
    expect(await toFetchResponse(gzip).text()).toBe('hello');
    const unknown = await forwardRequest(request('GET'), { target: url, path: '/compress', headers: {} });
    expect(await problemCode(unknown)).toEqual([502, 'upstream_unavailable']);
  });
});
