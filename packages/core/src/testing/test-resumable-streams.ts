import { describe, expect, it } from 'vitest';
import type { ResumableStreams } from '../chat/stream/resumable-streams.js';

const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text);

/** Everything a stream holds, as text, once it ended. */
async function textOf(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}

/** Resolves once `stream` has given at least `text` (the rest keeps coming). */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, text: string): Promise<string> {
  let seen = '';
  const decoder = new TextDecoder();
  while (!seen.includes(text)) {
    const { done, value } = await reader.read();
    if (done) break;
    seen += decoder.decode(value, { stream: true });
  }
  return seen;
}

/**
 * Conformance suite for {@link ResumableStreams}: `make({ maxBytes })` returns a fresh instance that
 * keeps at most `maxBytes` per running answer.
 */
export function testResumableStreams(
  make: (options: { maxBytes: number }) => ResumableStreams | Promise<ResumableStreams>,
): void {
  describe('ResumableStreams conformance', () => {
    const key = () => crypto.randomUUID();

    it('has nothing to resume for a conversation with no running answer', async () => {
      const streams = await make({ maxBytes: 1_000_000 });
      expect(await streams.resume(key())).toBeNull();
    });

    it('gives a re-attached reader the answer from its first byte, then live, to its end; to every reader', async () => {
      const streams = await make({ maxBytes: 1_000_000 });
      const id = key();
      const recording = await streams.record(id);
      recording.write(bytes('data: {"type":"start"}\n\n'));
      recording.write(bytes('data: {"type":"text-delta","delta":"Héllo 🚚"}\n\n'));
      const first = (await streams.resume(id))!;
      const second = (await streams.resume(id))!;
      expect(first).not.toBeNull();
      const reader = first.getReader();
      expect(await readUntil(reader, '🚚')).toContain('"type":"start"');
      recording.write(bytes('data: {"type":"finish"}\n\n'));
      recording.write(bytes('data: [DONE]\n\n'));
      recording.close();
      let rest = '';
      const decoder = new TextDecoder();
      for (let read = await reader.read(); !read.done; read = await reader.read())
        rest += decoder.decode(read.value, { stream: true });
      expect(rest).toContain('data: [DONE]');
      expect(await textOf(second)).toBe(
        'data: {"type":"start"}\n\ndata: {"type":"text-delta","delta":"Héllo 🚚"}\n\ndata: {"type":"finish"}\n\ndata: [DONE]\n\n',
      );
    });

    it('has nothing to resume once the answer ended', async () => {
      const streams = await make({ maxBytes: 1_000_000 });
      const id = key();
      const recording = await streams.record(id);
      recording.write(bytes('data: [DONE]\n\n'));
      recording.close();
      await expect.poll(() => streams.resume(id)).toBeNull();
    });

    it("gives a conversation's latest answer when a later turn starts", async () => {
      const streams = await make({ maxBytes: 1_000_000 });
      const id = key();
      const earlier = await streams.record(id);
      earlier.write(bytes('data: "first"\n\n'));
      const later = await streams.record(id);
      later.write(bytes('data: "second"\n\n'));
      later.close();
      earlier.close();
      // Either nothing (both ended) or the later one: never the earlier answer.
      const resumed = await streams.resume(id);
      if (resumed) expect(await textOf(resumed)).not.toContain('first');
    });

    it('keeps at most maxBytes: past it, nothing more to resume, and re-attached readers get an error part', async () => {
      const streams = await make({ maxBytes: 100 });
      const id = key();
      const recording = await streams.record(id);
      recording.write(bytes('data: "small"\n\n'));
      const attached = (await streams.resume(id))!;
      expect(attached).not.toBeNull();
      recording.write(bytes(`data: "${'x'.repeat(200)}"\n\n`));
      await expect.poll(() => streams.resume(id)).toBeNull();
      const text = await textOf(attached);
      expect(text).not.toContain('xxx');
      // Never an answer that just stops: the page is told it cannot follow this one to its end.
      expect(text).toMatch(/^data: "small"\n\ndata: \{"type":"error","errorText":"[^"]+"\}\n\n$/);
      recording.write(bytes('data: [DONE]\n\n'));
      recording.close();
    });

    it('gives a late reader exactly the bytes written, however many pieces', async () => {
      const streams = await make({ maxBytes: 1_000_000 });
      const id = key();
      const recording = await streams.record(id);
      const pieces = Array.from({ length: 300 }, (_, index) => `data: {"type":"text-delta","delta":"${index} ✓"}\n\n`);
      for (const piece of pieces.slice(0, 200)) recording.write(bytes(piece));
      const late = (await streams.resume(id))!;
      for (const piece of pieces.slice(200)) recording.write(bytes(piece));
      recording.write(bytes('data: [DONE]\n\n'));
      recording.close();
      expect(await textOf(late)).toBe(`${pieces.join('')}data: [DONE]\n\n`);
    });

    it('tells readers of an answer that failed before its end, with an error part', async (context) => {
      const streams = await make({ maxBytes: 1_000_000 });
      const id = key();
      const recording = await streams.record(id);
      if (!recording.fail) return context.skip();
      recording.write(bytes('data: {"type":"start"}\n\n'));
      const attached = (await streams.resume(id))!;
      recording.fail();
      expect(await textOf(attached)).toMatch(
        /^data: \{"type":"start"\}\n\ndata: \{"type":"error","errorText":"[^"]+"\}\n\n$/,
      );
      await expect.poll(() => streams.resume(id)).toBeNull();
    });
  });
}
