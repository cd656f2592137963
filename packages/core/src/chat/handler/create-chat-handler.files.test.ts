import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { readAll, scriptedModel, sessionId, setupChat, textStep } from './chat.test-support.js';

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };
// A 1×1 transparent PNG.
const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const withParts = (parts: unknown[], id = 'u-file') => ({
  sessionId,
  context,
  messages: [{ id, role: 'user', parts }],
});
const file = (overrides: object = {}) => ({
  type: 'file',
  mediaType: 'image/png',
  filename: 'damage.png',
  url: `data:image/png;base64,${png}`,
  ...overrides,
});

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
    [
      'a remote URL (the server never fetches what a client names)',
      file({ url: 'https://attacker.example/x.png' }),
      'A file must be inline, as a base64 data: URL',
    ],
    ['a media type not allowed', file({ mediaType: 'application/x-msdownload' }), 'Files must be one of'],
    [
      'a file over the size limit',
      file({ url: `data:image/png;base64,${'A'.repeat(800_000)}` }),
      'A file must not exceed 524288 bytes',
    ],
    ['a malformed data URL', file({ url: 'data:image/png;base64,@@@' }), 'A file must be inline'],
    [
      'HTML in a data URL labelled as an image',
      file({ url: `data:text/html;base64,${btoa('<script>alert(1)</script>')}` }),
      "The data URL's type must be the file's mediaType",
    ],
    [
      'HTML declared as a PNG, URL and all',
      file({ url: `data:image/png;base64,${btoa('<html><script>alert(1)</script></html>')}` }),
      "The file's contents are not of its mediaType",
    ],
    [
      'a Windows program declared as a PDF',
      file({
        mediaType: 'application/pdf',
        filename: 'invoice.pdf',
        url: `data:application/pdf;base64,${btoa('MZ\x90\x00\x03\x00\x00\x00PE')}`,
      }),
      "The file's contents are not of its mediaType",
    ],
    [
      'an SVG (it can carry scripts)',
      file({
        mediaType: 'image/svg+xml',
        url: `data:image/svg+xml;base64,${btoa('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')}`,
      }),
      'SVG files are refused',
    ],
  ])('refuses %s with 400 and nothing stored', async (_case, part, message) => {
    const model = scriptedModel(() => textStep('never'));
    const { post, store } = await setupChat(model);
    const response = await post(withParts([{ type: 'text', text: 'look' }, part]));
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain(message);
    expect(model.doStreamCalls).toHaveLength(0);
    expect(await store.getSession(sessionId)).toBeNull();
  });

  it('takes each default type whose bytes are its own', async () => {
    const { post } = await setupChat(scriptedModel(() => textStep('ok')));
    const headers: Record<string, string> = {
      'image/jpeg': '\xff\xd8\xff\xe0\x00\x10JFIF\x00',
      'image/gif': 'GIF89a\x01\x00\x01\x00',
      'image/webp': 'RIFF\x24\x00\x00\x00WEBPVP8 ',
      'application/pdf': '%PDF-1.7\n%\xe2\xe3',
    };
    for (const [mediaType, bytes] of Object.entries(headers)) {
      const response = await post(
        withParts(
          [file({ mediaType, url: `data:${mediaType};base64,${btoa(bytes + 'rest of the file')}` })],
          `u-${mediaType.replace(/\W/g, '')}`,
        ),
      );
      expect(response.status, mediaType).toBe(200);
      await readAll(response);
    }
  });

  it('refuses SVG even when listed, unless the host opts in; then only an SVG that is one', async () => {
    const svg = (text: string) =>
      file({ mediaType: 'image/svg+xml', filename: 'logo.svg', url: `data:image/svg+xml;base64,${btoa(text)}` });
    const listed = await setupChat(
      scriptedModel(() => textStep('ok')),
      { limits: { files: { mediaTypes: ['image/png', 'image/svg+xml'] } } },
    );
    expect((await listed.post(withParts([svg('<svg xmlns="http://www.w3.org/2000/svg"/>')]))).status).toBe(400);
    const allowed = await setupChat(
      scriptedModel(() => textStep('ok')),
      { limits: { files: { mediaTypes: ['image/png', 'image/svg+xml'], allowSvg: true } } },
    );
    const accepted = await allowed.post(
      withParts([svg('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>')]),
    );
    expect(accepted.status).toBe(200);
    await readAll(accepted);
    expect((await allowed.post(withParts([svg('<html><body>not an svg</body></html>')], 'u-html'))).status).toBe(400);
    // Opted in, but not listed: still refused.
    const unlisted = await setupChat(
      scriptedModel(() => textStep('ok')),
      { limits: { files: { allowSvg: true } } },
    );
    const refused = await unlisted.post(withParts([svg('<svg xmlns="http://www.w3.org/2000/svg"/>')]));
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await refused.json())).toContain('Files must be one of');
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
