const encoder = new TextEncoder();

/** Length of a string in UTF-8 bytes (what `Buffer.byteLength` gives), with Web-standard APIs only. */
export function utf8ByteLength(text: string): number {
  return encoder.encode(text).byteLength;
}
