import type { UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../../logging/logger.js';
import { readAll, scriptedModel, sessionId, setupChat, textStep, userMessage } from './chat.test-support.js';

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };

/** A logger that records what it is told. */
function recordingLogger() {
  const lines: Array<{ level: 'warn' | 'error'; message: string; details: unknown }> = [];
  const logger: Logger = {
    warn: (message, details) => lines.push({ level: 'warn', message, details }),
    error: (message, details) => lines.push({ level: 'error', message, details }),
  };
  return { logger, lines };
}

describe('createChatHandler: logger and ids', () => {
  it('warns through the injected logger when told to trust the request body, and only then', async () => {
    const without = recordingLogger();
    await setupChat(
      scriptedModel(() => textStep('ok')),
      { logger: without.logger, identity: 'trust-request-body' },
    );
    expect(without.lines).toEqual([
      {
        level: 'warn',
        message: expect.stringContaining('identity and capability flags are taken from the request body'),
        details: undefined,
      },
    ]);
    const withSecret = recordingLogger();
    await setupChat(
      scriptedModel(() => textStep('ok')),
      { logger: withSecret.logger, contextSecret: 'a'.repeat(32) },
    );
    expect(withSecret.lines).toEqual([]);
  });

  it('reports unexpected errors to the logger when no onError is given, and answers a safe 500', async () => {
    const { logger, lines } = recordingLogger();
    const failure = new Error('connection reset by peer 10.0.0.5');
    const chat = await setupChat(
      scriptedModel(() => textStep('ok')),
      { logger, onError: undefined },
    );
    chat.store.getOrCreateSession = async () => Promise.reject(failure);
    const response = await chat.post({ sessionId, messages: [userMessage('hi')], context });
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain('10.0.0.5');
    expect(lines.filter((line) => line.level === 'error')).toEqual([
      { level: 'error', message: 'chat handler error', details: failure },
    ]);
  });

  it('gives each answer a "msg_" id of 16 random bytes in base64url', async () => {
    const chat = await setupChat(scriptedModel(() => textStep('ok')));
    const ids = new Set<string>();
    for (const text of ['one', 'two']) {
      const start = (await readAll(await chat.post({ sessionId, messages: [userMessage(text)], context }))).find(
        (chunk) => chunk.type === 'start',
      ) as UIMessageChunk & {
        messageId: string;
      };
      expect(start.messageId).toMatch(/^msg_[\w-]{22}$/);
      expect(Buffer.from(start.messageId.slice(4), 'base64url')).toHaveLength(16);
      ids.add(start.messageId);
    }
    expect(ids.size).toBe(2);
  });
});
