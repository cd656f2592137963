// Next.js itself is not installed: this stands in for its router — the URL picks a route file, the
// method picks its export, which gets a `Request` and answers a `Response` — and for the platform in
// front of it, which sets `x-forwarded-for`.
import { Readable } from 'node:stream';
import { describeHostConformance } from '../conformance/describe-host-conformance.ts';
import { listen } from './listen.ts';

type RouteModule = Record<string, unknown>;
const routes: Array<[RegExp, () => Promise<RouteModule>]> = [
  [/^\/chat$/, () => import('../next/app/chat/route.ts')],
  [/^\/chat\/history$/, () => import('../next/app/chat/history/route.ts')],
  [/^\/sessions(\/.*)?$/, () => import('../next/app/sessions/[[...path]]/route.ts')],
  [/^\/api\/me$/, () => import('../next/app/api/me/route.ts')],
];

describeHostConformance('Next.js App Router route handlers', async () =>
  listen(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = routes.find(([pattern]) => pattern.test(url.pathname));
    const handler = route && ((await route[1]())[req.method ?? 'GET'] as ((request: Request) => Promise<Response>) | undefined);
    if (!handler) return void res.writeHead(route ? 405 : 404).end();
    const headers = new Headers(Object.entries(req.headers).flatMap(([name, value]) => (value === undefined ? [] : [[name, String(value)]]) as Array<[string, string]>));
    headers.set('x-forwarded-for', req.socket.remoteAddress ?? '');
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const request = new Request(url, { method: req.method, headers, body: hasBody ? (Readable.toWeb(req) as ReadableStream) : null, duplex: 'half' } as RequestInit);
    const response = await handler(request);
    for (const [name, value] of response.headers) if (name !== 'set-cookie') res.setHeader(name, value);
    if (response.headers.getSetCookie().length > 0) res.setHeader('set-cookie', response.headers.getSetCookie());
    res.writeHead(response.status);
    if (response.body) Readable.fromWeb(response.body as never).pipe(res);
    else res.end();
  }),
);
