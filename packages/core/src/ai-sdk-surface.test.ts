import * as ai from 'ai';
import { describe, expect, it } from 'vitest';

// What core calls of the AI SDK at run time. `ai` is a dependency on `^7`: a 7.x release that renames or
// drops one of these — the experimental ones above all, which carry no semver promise — fails here, by
// name, before it fails a chat turn.
const experimental = ['experimental_streamTextLowMemory'] as const;
const stable = [
  'ToolChoiceViolationError',
  'UI_MESSAGE_STREAM_HEADERS',
  'convertToModelMessages',
  'createUIMessageStream',
  'getToolName',
  'isStepCount',
  'isToolUIPart',
  'parsePartialJson',
  'safeValidateUIMessages',
  'toUIMessageChunk',
  'tool',
  'zodSchema',
] as const;

describe('the AI SDK surface core depends on', () => {
  it.each([...experimental, ...stable])('ai exports %s', (name) => {
    expect(ai).toHaveProperty(name);
    expect((ai as Record<string, unknown>)[name]).toBeDefined();
  });

  it('keeps the low-memory streamText one-reader: the stream once, no tee holding a second copy', () => {
    const result = ai.experimental_streamTextLowMemory({ model: 'never-called', prompt: 'x' } as never);
    const stream = result.stream;
    expect(stream).toBeInstanceOf(ReadableStream);
    expect(() => result.stream).toThrow(/one stream consumer/);
    void stream.cancel();
  });
});
