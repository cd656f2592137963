import { DeskpilotError } from '../errors/deskpilot-error.js';
import type { HttpRequest } from './http-request.js';
import { isJsonContentType } from './read-json-body.js';

/**
 * CSRF defence for a state-changing request; throws when it must be refused, before anything is read
 * or changed:
 * - `Sec-Fetch-Site: cross-site`, or an `Origin` that is not in the allow-list → `cross_site_request` (403);
 * - a body that is not `application/json` → `unsupported_media_type` (415). A cross-site form or
 *   `text/plain` fetch cannot send `application/json` without a CORS preflight, so this closes the
 *   classic form-post CSRF too. A bodiless `DELETE` needs no content type.
 *
 * A request without `Origin` comes from a non-browser client (browsers always send it on POST and
 * DELETE), which cannot carry a victim's cookies; it is allowed.
 */
export function checkRequestOrigin(request: HttpRequest, allowedOrigins: ReadonlySet<string>): void {
  const fetchSite = request.headers.get('sec-fetch-site');
  if (fetchSite !== null && fetchSite.trim().toLowerCase() === 'cross-site') {
    throw new DeskpilotError('cross_site_request', { detail: 'Cross-site requests are not accepted.' });
  }
  const origin = request.headers.get('origin');
  if (origin !== null && !allowedOrigins.has(origin.trim().toLowerCase())) {
    throw new DeskpilotError('cross_site_request', { detail: 'This origin is not allowed.' });
  }
  const contentType = request.headers.get('content-type');
  const mustBeJson = request.method === 'POST' || contentType !== null || hasBody(request);
  if (mustBeJson && !isJsonContentType(contentType)) {
    throw new DeskpilotError('unsupported_media_type', { detail: 'The body must be application/json.' });
  }
}

function hasBody(request: HttpRequest): boolean {
  const length = request.headers.get('content-length');
  return (length !== null && length.trim() !== '0') || request.headers.get('transfer-encoding') !== null;
}

/** Normalises an allow-list of origins once (lower case, no trailing slash). Throws on an entry that is not an origin. */
export function normalizeOrigins(origins: Iterable<string>): ReadonlySet<string> {
  const set = new Set<string>();
  for (const entry of origins) {
    const trimmed = entry.trim();
    if (trimmed === '') continue;
    let url: URL;
    try {
      url = new URL(trimmed);
    } catch {
      throw new TypeError(`Invalid origin in allow-list: ${JSON.stringify(entry)}`);
    }
    if (url.origin === 'null') throw new TypeError(`Invalid origin in allow-list: ${JSON.stringify(entry)}`);
    set.add(url.origin.toLowerCase());
  }
  return set;
}
