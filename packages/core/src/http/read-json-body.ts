import { DeskpilotError } from '../errors/deskpilot-error.js';
import { checkJsonValue } from '../validation/check-json-value.js';
import { formatFieldPath } from '../validation/parse-with-schema.js';
import type { HttpRequest } from './http-request.js';

/** Options of {@link readJsonBody}. */
export interface ReadJsonBodyOptions {
  /** Deepest nesting of arrays and objects in the body (the body itself is level 1). @default 64 */
  maxDepth?: number;
}

/** True when a `Content-Type` value names JSON (`application/json`, any parameters, any case). */
export function isJsonContentType(contentType: string | null): boolean {
  if (contentType === null) return false;
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return mediaType === 'application/json';
}

/**
 * Reads a JSON body under the one input policy of the edge, never buffering more than `maxBytes`:
 * the bytes must be strict UTF-8, the JSON well formed, every string and key valid text (no NUL, no
 * lone surrogate: refused, never rewritten) and the nesting within `maxDepth`. Throws
 * `unsupported_media_type` (not JSON), `payload_too_large`, `invalid_json` (bad bytes or syntax) or
 * `invalid_request` naming each offending field.
 *
 * @example
 * const body = await readJsonBody(fromFetchRequest(request), 1024 * 1024); // throws a DeskpilotError for problemResponse
 */
export async function readJsonBody(
  request: HttpRequest,
  maxBytes: number,
  options: ReadJsonBodyOptions = {},
): Promise<unknown> {
  if (!isJsonContentType(request.headers.get('content-type'))) {
    throw new DeskpilotError('unsupported_media_type', { detail: 'The body must be application/json.' });
  }
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    for await (const chunk of request.body) {
      size += chunk.byteLength;
      // Stop reading as soon as the limit is passed: a lying or absent Content-Length buys nothing.
      if (size > maxBytes) throw tooLarge(maxBytes);
      chunks.push(chunk);
    }
  }
  let text: string;
  try {
    // Fatal: a lenient decoder would turn bad bytes into U+FFFD, silently rewriting what was sent.
    text = new TextDecoder('utf-8', { fatal: true }).decode(concat(chunks, size));
  } catch (cause) {
    throw new DeskpilotError('invalid_json', { detail: 'The body is not valid UTF-8.', cause });
  }
  let value: unknown;
  try {
    // V8 parses iteratively: depth costs no stack here, and is bounded by the walk below.
    value = JSON.parse(text);
  } catch (cause) {
    throw new DeskpilotError('invalid_json', { detail: 'The body is not valid JSON.', cause });
  }
  const problems = checkJsonValue(value, { maxDepth: options.maxDepth ?? 64 });
  if (problems.length > 0) {
    throw new DeskpilotError('invalid_request', {
      detail: 'The request body is invalid.',
      errors: problems.map((problem) => ({ path: formatFieldPath(problem.path), message: problem.message })),
    });
  }
  return value;
}

function tooLarge(maxBytes: number): DeskpilotError {
  return new DeskpilotError('payload_too_large', { detail: `The body must not exceed ${maxBytes} bytes.` });
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
