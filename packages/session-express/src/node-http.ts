import type { HttpRequest, HttpResponse } from '@deskpilot/core';
import type { Request, Response } from 'express';

/** Reads an Express request as a Deskpilot {@link HttpRequest}, without building a fetch `Request`. */
export function toHttpRequest(req: Request): HttpRequest {
  return {
    method: req.method,
    path: req.path,
    headers: {
      get(name) {
        const value = req.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
      },
    },
    body: requestBody(req),
    clientAddress: req.socket.remoteAddress,
  };
}

/** Writes a Deskpilot {@link HttpResponse} to an Express response. */
export function sendHttpResponse(res: Response, response: HttpResponse): void {
  const headers = new Map<string, string[]>();
  for (const [name, value] of response.headers) {
    const values = headers.get(name);
    if (values) values.push(value);
    else headers.set(name, [value]);
  }
  res.statusCode = response.status;
  for (const [name, values] of headers) res.setHeader(name, values.length === 1 ? values[0]! : values);
  res.end(response.body ?? undefined);
}

function requestBody(req: Request): HttpRequest["body"] {
  if (req.method === 'GET' || req.method === 'HEAD') return null;
  // A body parser mounted earlier has consumed the stream: hand its result back as bytes.
  const parsed: unknown = req.body;
  if (parsed !== undefined) {
    const bytes = Buffer.isBuffer(parsed) ? parsed : Buffer.from(typeof parsed === 'string' ? parsed : JSON.stringify(parsed));
    return [bytes];
  }
  return req;
}
