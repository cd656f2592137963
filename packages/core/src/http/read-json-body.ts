import { DeskpilotError } from '../errors/deskpilot-error.js';
import type { HttpRequest } from './http-request.js';

/** True when a `Content-Type` value names JSON (`application/json`, any parameters, any case). */
export function isJsonContentType(contentType: string | null): boolean {
  if (contentType === null) return false;
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return mediaType === 'application/json';
}

/**
 * Reads and parses a JSON body, never buffering more than `maxBytes`.
 * Throws `unsupported_media_type` (not JSON), `payload_too_large`, or `invalid_json`.
 */
export async function readJsonBody(request: HttpRequest, maxBytes: number): Promise<unknown> {
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
  const text = new TextDecoder('utf-8', { fatal: false }).decode(concat(chunks, size));
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new DeskpilotError('invalid_json', { detail: 'The body is not valid JSON.', cause });
  }
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
