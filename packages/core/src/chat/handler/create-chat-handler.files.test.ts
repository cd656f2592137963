import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { readAll, scriptedModel, sessionId, setupChat, textStep } from './chat.test-support.js';

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };
// A 1×1 transparent PNG.
const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const withParts = (parts: unknown[], id = 'u-file') => ({ sessionId, context, messages: [{ id, role: 'user', parts }] });
const file = (overrides: object = {}) => ({ type: 'file', mediaType: 'image/png', filename: 'damage.png', url: `data:image/png;base64,${png}`, ...overrides });

describe('POST /chat: files in a user message', () => {
  it('passes an inline image to the model and stores it with the turn', async () => {
    const model = scriptedModel(() => textStep('I see the damage.'));
    const { post, store } = await setupChat(model);
    const response = await post(withParts([{ type: 'text', text: 'The box arrived like this.' }, file()]));
    expect(response.status).toBe(200);
    await readAll(response);
    const prompt = JSON.stringify(model.doStreamCalls[0]!.prompt);
    expect(prompt).toContain('"type":"file"');
    expect(prompt).toContain('image/png');
    const [user] = (await store.getMessages(sessionId)) as UIMessage[];
    expect(user!.parts).toEqual([{ type: 'text', text: 'The box arrived like this.' }, file()]);
  });

  it('takes a message that is only a file', async () => {
    const { post } = await setupChat(scriptedModel(() => textStep('ok')));
    expect((await post(withParts([file()]))).status).toBe(200);
  });

  it.each([
    ['a remote URL (the server never fetches what a client names)', file({ url: 'https://attacker.example/x.png' }), 'A file must be inline, as a base64 data: URL'],
    ['a media type not allowed', file({ mediaType: 'application/x-msdownload' }), 'Files must be one of'],
    ['a file over the size limit', file({ url: `data:image/png;base64,${'A'.repeat(800_000)}` }), 'A file must not exceed 524288 bytes'],
    ['a malformed data URL', file({ url: 'data:image/png;base64,@@@' }), 'A file must be inline'],
  ])('refuses %s with 400 and nothing stored', async (_case, part, message) => {
    const model = scriptedModel(() => textStep('never'));
    const { post, store } = await setupChat(model);
    const response = await post(withParts([{ type: 'text', text: 'look' }, part]));
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain(message);
    expect(model.doStreamCalls).toHaveLength(0);
    expect(await store.getSession(sessionId)).toBeNull();
  });

  it('refuses more files than maxFiles, and any file when attachments are off', async () => {
    const { post } = await setupChat(
      scriptedModel(() => textStep('ok')),
      { limits: { files: { maxFiles: 1 } } },
    );
    expect((await post(withParts([file(), file()]))).status).toBe(400);
    const off = await setupChat(
      scriptedModel(() => textStep('ok')),
      { limits: { files: { maxFiles: 0 } } },
    );
    expect((await off.post(withParts([{ type: 'text', text: 'hi' }, file()]))).status).toBe(400);
  });
});
