import { describe, expect, it } from 'vitest';
import { createMemoryTokenMeter } from '../../limiter/token-meter.js';
import { readAll, scriptedModel, setupChat, textStep } from './chat.test-support.js';

// The meters' own clock, frozen: a test that crosses a wall-clock window boundary must not split its counts.
const frozen = () => Date.UTC(2026, 0, 1, 12);

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };
// A PNG signature and ~500 KB after it: one attachment near the default 512 KiB file limit.
const bigPng = btoa('\x89PNG\r\n\x1a\n' + 'x'.repeat(500_000));
const turn = (sessionId: string, index: number) => ({
  sessionId,
  context,
  messages: [
    {
      id: `u-${index}`,
      role: 'user',
      parts: [
        { type: 'text', text: `photo ${index}` },
        { type: 'file', mediaType: 'image/png', url: `data:image/png;base64,${bigPng}` },
      ],
    },
  ],
});

describe('POST /chat: storage quotas', () => {
  it('refuses a turn past the conversation quota (4 MiB by default) with 413 quota_exceeded, nothing stored, no model call', async () => {
    const model = scriptedModel(() => textStep('Got it.'));
    const meter = createMemoryTokenMeter({ windowMs: 60_000, now: frozen });
    const { post, store } = await setupChat(model, {
      limits: {
        user: { policy: { limit: 100 } },
        tokens: { policy: { limit: 1_000_000, windowMs: 60_000 }, limiter: meter },
      },
    });
    const sessionId = crypto.randomUUID();
    const statuses: number[] = [];
    for (let index = 0; index < 12; index++) {
      const response = await post(turn(sessionId, index));
      statuses.push(response.status);
      if (response.status === 200) await readAll(response);
      else {
        expect(response.headers.get('content-type')).toBe('application/problem+json');
        expect(await response.json()).toMatchObject({
          code: 'quota_exceeded',
          status: 413,
          detail: expect.stringMatching(/This conversation has reached its storage quota \(4194304 bytes\)/),
        });
      }
    }
    // 667 KiB a turn: six fit in 4 MiB, the rest are refused.
    expect(statuses).toEqual([...Array<number>(6).fill(200), ...Array<number>(6).fill(413)]);
    expect(model.doStreamCalls).toHaveLength(6);
    const stored = await store.getMessages(sessionId);
    expect(stored).toHaveLength(12);
    expect(new TextEncoder().encode(JSON.stringify(stored)).byteLength).toBeLessThanOrEqual(4 * 1024 * 1024);
    // The refused turns' token reservations were given back: only the six turns' 15 tokens each count.
    expect(meter.used('rep@example.com').used).toBe(6 * 15);
  });

  it("refuses a new conversation past the user's quota, naming it, leaving no conversation, and lets another user in", async () => {
    const model = scriptedModel(() => textStep('ok'));
    const { post, store } = await setupChat(model, {
      limits: { user: { policy: { limit: 100 } }, storage: { userBytes: 2_000_000 } },
    });
    const outcomes: number[] = [];
    const ids = Array.from({ length: 4 }, () => crypto.randomUUID());
    for (let index = 0; index < 4; index++) {
      const response = await post(turn(ids[index]!, index));
      outcomes.push(response.status);
      if (response.ok) await readAll(response);
      else
        expect(await response.json()).toMatchObject({
          code: 'quota_exceeded',
          detail: expect.stringMatching(/Your conversations have reached their storage quota \(2000000 bytes\)/),
        });
    }
    expect(outcomes).toEqual([200, 200, 413, 413]);
    // The refused turns stored nothing: no conversation (titled or not), no message.
    const listed = await store.listSessions({ ...context, archived: false, limit: 10 });
    expect(listed.map((summary) => summary.session.id).sort()).toEqual(ids.slice(0, 2).sort());
    for (const refused of ids.slice(2)) expect(await store.getSession(refused)).toBeNull();
    expect(
      store
        .dump()
        .sessions.map((session) => session.id)
        .sort(),
    ).toEqual(ids.slice(0, 2).sort());
    const other = await post({
      ...turn(crypto.randomUUID(), 9),
      context: { ...context, userEmail: 'other@example.com' },
    });
    expect(other.status).toBe(200);
  });

  it('refuses a quota that is not a positive integer', async () => {
    await expect(
      setupChat(
        scriptedModel(() => textStep('x')),
        { limits: { storage: { conversationBytes: 0 } } },
      ),
    ).rejects.toThrow(/limits.storage.conversationBytes must be a positive integer/);
  });
});
