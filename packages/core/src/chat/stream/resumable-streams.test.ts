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
});
