import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../../testing/fake-clock.js';
import { createMemoryChatStore } from './memory-chat-store.js';
import { purgeArchivedConversations } from './purge-archived-conversations.js';

const day = 86_400_000;

describe('purgeArchivedConversations', () => {
  it('deletes every conversation archived and idle for the retention, in batches, and keeps the rest', async () => {
    const clock = createFakeClock();
    const store = createMemoryChatStore();
    const open = async (archivedDaysAgo: number | null) => {
      const id = crypto.randomUUID();
      const time = clock.now() - 40 * day;
      await store.getOrCreateSession({
        id,
        userEmail: 'rep@example.com',
        projectKey: 'p',
        createdAt: time,
        updatedAt: time,
      });
      if (archivedDaysAgo !== null)
        await store.updateConversation(id, { archivedAt: clock.now() - archivedDaysAgo * day });
      return id;
    };
    const expired = await Promise.all(Array.from({ length: 7 }, () => open(31)));
    const kept = [await open(29), await open(null)];
    expect(await purgeArchivedConversations(store, { retentionMs: 30 * day, now: clock.now, batchSize: 3 })).toBe(7);
    for (const id of expired) expect((await store.getSession(id))!.deletedAt).toBe(clock.now());
    for (const id of kept) expect((await store.getSession(id))!.deletedAt).toBeNull();
    expect(await purgeArchivedConversations(store, { retentionMs: 30 * day, now: clock.now })).toBe(0);
    await expect(purgeArchivedConversations(store, { retentionMs: -1 })).rejects.toThrow('retentionMs');
  });
});
