import { fromNodeRequest, writeHttpResponse, type HttpRequest, type HttpResponse } from '@deskpilot/core';
import type { Request, Response } from 'express';

/**
 * Reads an Express request as a Deskpilot {@link HttpRequest} (path relative to the mount point), with
 * `req.ip` as the client address: the socket address, or the client behind the proxies Express's
 * `trust proxy` setting names.
 */
export function toHttpRequest(req: Request): HttpRequest {
  return fromNodeRequest(req, req.path, { clientAddress: req.ip });
}

/** Writes a Deskpilot {@link HttpResponse} to an Express response. */
export function sendHttpResponse(res: Response, response: HttpResponse): void {
  writeHttpResponse(res, response);
}
