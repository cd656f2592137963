import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { DeskpilotError, endToEndHeaders, problemResponse } from '@deskpilot/core';
import type { Request, Response } from 'express';
import { sendHttpResponse } from './node-http.js';

/**
 * Sends `req` (method, body) to `path` on the origin of `target` with `headers` and relays the answer to `res`: status, end-to-end
 * headers (`Set-Cookie` included) and body, streamed. An unreachable or hung upstream answers 502
 * `upstream_unavailable` while nothing was sent yet, and cuts the response otherwise.
 */
export function forwardRequest(req: Request, res: Response, target: URL, path: string, headers: Record<string, string | string[]>, timeoutMs: number): void {
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  // Host and port come from configuration only: the client's path is never parsed as a URL, so a
  // path such as `//elsewhere.example/` cannot redirect the call.
  const outgoing = send(
    { protocol: target.protocol, hostname: target.hostname, port: target.port, path, method: req.method, headers, timeout: timeoutMs },
    (upstream) => relay(upstream, res),
  );
  const fail = (cause: unknown) => {
    if (res.headersSent) return void res.destroy();
    sendHttpResponse(res, problemResponse(new DeskpilotError('upstream_unavailable', { detail: 'The upstream service is unreachable.', cause })));
  };
  outgoing.on('timeout', () => outgoing.destroy(new Error(`No answer within ${timeoutMs} ms`)));
  outgoing.on('error', fail);
  // A client that goes away takes its upstream request with it.
  res.on('close', () => {
    if (!res.writableFinished) outgoing.destroy();
  });
  req.pipe(outgoing);
}

function relay(upstream: IncomingMessage, res: Response): void {
  res.writeHead(upstream.statusCode ?? 502, endToEndHeaders(upstream.headers));
  // An answer cut mid-body is cut for the client too, never ended as if complete.
  upstream.on('error', () => res.destroy());
  upstream.pipe(res);
}
