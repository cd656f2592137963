import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { readAll, scriptedModel, sessionId, setupChat, textStep, toolStep, userMessage } from './chat.test-support.js';

const body = {
  sessionId,
  context: { userEmail: 'rep@example.com', projectKey: 'acme-b2c' },
  messages: [userMessage('hi')],
};

describe('POST /chat: a model that fails or goes silent', () => {
  it('ends the turn with a safe error part and records it failed when the provider call fails', async () => {
    const model = new MockLanguageModelV4({
      doStream: async () => {
        throw Object.assign(new Error('503 overloaded (upstream detail that must not reach the client)'), {
          statusCode: 503,
        });
      },
    });
    const { post, store, errors } = await setupChat(model, { modelCall: { maxRetries: 0 } });
    const chunks = await readAll(await post(body));
    expect(chunks).toContainEqual({ type: 'error', errorText: 'The assistant could not answer. Please try again.' });
    expect(JSON.stringify(chunks)).not.toContain('upstream detail');
    expect((await store.getSession(sessionId))?.lastTurnStatus).toBe('failed');
    // The cause goes to onError (the operator's log), not to the client.
    expect(errors).toContainEqual(expect.objectContaining({ message: expect.stringContaining('503 overloaded') }));
  });

  it('cancels a provider that accepted and went silent after idleTimeoutMs, and records the turn failed', async () => {
    let cancelled = false;
    const silent = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream({
          start: (controller) => controller.enqueue({ type: 'stream-start', warnings: [] }),
          cancel: () => void (cancelled = true),
        }),
      }),
    });
    const { post, store } = await setupChat(silent, { modelCall: { idleTimeoutMs: 50, maxRetries: 0 } });
    const chunks = await readAll(await post(body));
    expect(chunks.map((chunk) => chunk.type)).toContain('error');
    expect(chunks.at(-1)).toMatchObject({ type: 'finish' });
    expect(cancelled).toBe(true);
    expect((await store.getSession(sessionId))?.lastTurnStatus).toBe('failed');
  });

  it('leaves a model that keeps talking alone', async () => {
    const { post, store } = await setupChat(
      scriptedModel(() => textStep('A long but steady answer.')),
      { modelCall: { idleTimeoutMs: 50 } },
    );
    await readAll(await post(body));
    expect((await store.getSession(sessionId))?.lastTurnStatus).toBe('complete');
  });

  it('does not fail a turn whose model called a tool with invalid input: the model sees the error and answers', async () => {
    const model = scriptedModel((_call, index) =>
      index === 0 ? toolStep({ name: 'getOrder', input: { orderId: 42 } }) : textStep('Which order?'),
    );
    const { post, store, errors } = await setupChat(model);
    const chunks = await readAll(await post(body));
    expect(chunks).toContainEqual(
      expect.objectContaining({
        type: 'tool-input-error',
        errorText: 'The assistant called a tool with invalid input.',
      }),
    );
    expect(JSON.stringify(model.doStreamCalls[1]!.prompt)).toMatch(/Invalid input for tool getOrder/);
    expect((await store.getSession(sessionId))?.lastTurnStatus).toBe('complete');
    expect(errors).toEqual([]);
  });

  it('keeps provider-specific custom parts out of the stream and the history', async () => {
    const model = scriptedModel(() => [
      { type: 'stream-start', warnings: [] },
      { type: 'custom', kind: 'anthropic.message_start', providerMetadata: { anthropic: { id: 'msg_1' } } },
      ...textStep('Hello.').slice(1),
    ]);
    const { post, store } = await setupChat(model);
    const chunks = await readAll(await post(body));
    expect(chunks.map((chunk) => chunk.type)).not.toContain('custom');
    expect(JSON.stringify(await store.getMessages(sessionId))).not.toContain('message_start');
  });
});
