import { describe, expect, it } from 'vitest';
import { testResumableStreams } from '../../testing/test-resumable-streams.js';
import { createMemoryResumableStreams } from './resumable-streams.js';

testResumableStreams((options) => createMemoryResumableStreams(options));

describe('createMemoryResumableStreams', () => {
  it('gives every byte back in order, to a reader that attaches late', async () => {
    const streams = createMemoryResumableStreams();
    const recording = await streams.record('c-1');
    const encoder = new TextEncoder();
    const sent = Array.from({ length: 200 }, (_, index) => `data: {"n":${index}}\n\n`);
    for (const text of sent.slice(0, 150)) recording.write(encoder.encode(text));
    const resumed = (await streams.resume('c-1'))!;
    for (const text of sent.slice(150)) recording.write(encoder.encode(text));
    recording.close();
    let received = '';
    for await (const chunk of resumed) received += new TextDecoder().decode(chunk);
    expect(received).toBe(sent.join(''));
  });

  it('keeps a long answer byte for byte across its blocks: small events, some larger than a block, up to maxBytes exactly', async () => {
    const maxBytes = 300_000;
    const streams = createMemoryResumableStreams({ maxBytes });
    const recording = await streams.record('c-1');
    const events: Uint8Array[] = [];
    let total = 0;
    for (let index = 0; total < maxBytes - 100_000; index++) {
      // Mostly small events, and now and then one past the largest block (64 KiB).
      const size = index % 997 === 500 ? 70_000 : 20 + (index % 53);
      events.push(new Uint8Array(size).map((_, offset) => (index + offset) % 251));
      total += size;
    }
    events.push(new Uint8Array(maxBytes - total).fill(7));
    const expected = Buffer.concat(events);
    const half = Math.floor(events.length / 2);
    for (const event of events.slice(0, half)) recording.write(event);
    const early = (await streams.resume('c-1'))!;
    for (const event of events.slice(half, -1)) recording.write(event);
    const late = (await streams.resume('c-1'))!;
    recording.write(events.at(-1)!);
    recording.close();
    const read = async (stream: ReadableStream<Uint8Array>) => {
      const chunks: Uint8Array[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      return Buffer.concat(chunks);
    };
    const [fromEarly, fromLate] = await Promise.all([read(early), read(late)]);
    expect(fromEarly.byteLength).toBe(maxBytes);
    expect(fromEarly.equals(expected)).toBe(true);
    expect(fromLate.equals(expected)).toBe(true);
  });
});
