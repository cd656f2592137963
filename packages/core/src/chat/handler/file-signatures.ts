/**
 * The leading bytes of the file types the chat accepts by default, from each format's specification:
 * a file declared as one of these must start with them. Types not listed here (a host may allow
 * others) are checked for their declared type only.
 */
const signatures: Record<string, (bytes: Uint8Array) => boolean> = {
  // PNG: the 8-byte signature (RFC 2083 §3.1).
  'image/png': (bytes) => startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  // JPEG: SOI then the first marker's 0xFF.
  'image/jpeg': (bytes) => startsWith(bytes, [0xff, 0xd8, 0xff]),
  // GIF: "GIF87a" or "GIF89a".
  'image/gif': (bytes) => ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a',
  // WebP: a RIFF container whose form type is "WEBP".
  'image/webp': (bytes) => ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP',
  // PDF: "%PDF-" (ISO 32000 §7.5.2).
  'application/pdf': (bytes) => ascii(bytes, 0, 5) === '%PDF-',
  // SVG (only where a host allows it): XML text whose first markup is a declaration, a comment or <svg.
  'image/svg+xml': (bytes) => /^(?:\uFEFF)?\s*<(?:\?xml|!--|svg[\s>])/i.test(ascii(bytes, 0, bytes.length)),
};

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((byte, index) => bytes[index] === byte);
}

function ascii(bytes: Uint8Array, start: number, end: number): string {
  return String.fromCharCode(...bytes.subarray(start, end));
}

/** How many leading bytes {@link matchesFileSignature} needs. */
export const signatureBytes = 16;

/** Whether the file's leading bytes are those of `mediaType`; true for a type without a known signature. */
export function matchesFileSignature(mediaType: string, leading: Uint8Array): boolean {
  const matches = signatures[mediaType.toLowerCase()];
  return matches === undefined || matches(leading);
}

/** The first bytes of a base64 payload, decoded (enough for {@link matchesFileSignature}). */
export function leadingBytes(base64: string): Uint8Array {
  const head = base64.slice(0, (signatureBytes / 3) * 4 + 4).replace(/=+$/, '');
  // Whole groups of four only: a partial group would not decode.
  const whole = head.slice(0, head.length - (head.length % 4));
  try {
    return Uint8Array.from(atob(whole), (char) => char.charCodeAt(0));
  } catch {
    return new Uint8Array();
  }
}
