import type { ChatStore } from './chat-store.js';

/** Options of {@link purgeArchivedConversations}. */
export interface PurgeArchivedConversationsOptions {
  /** How long an archived conversation is kept: deleted once archived, and idle, this long. */
  retentionMs: number;
  now?: () => number;
  /** Conversations deleted per store call. @default 500 */
  batchSize?: number;
}

/**
 * The retention policy for archived conversations: deletes (a tombstone stays, as `deleteSession`)
 * every conversation archived and without activity for `retentionMs`, in batches; returns how many.
 * Run it on a timer (the reference chat server runs it every minute when `ARCHIVED_RETENTION_DAYS`
 * is set).
 *
 * @example
 * await purgeArchivedConversations(store, { retentionMs: 30 * 86_400_000 });
 */
export async function purgeArchivedConversations(
  store: Pick<ChatStore, 'purgeArchived'>,
  options: PurgeArchivedConversationsOptions,
): Promise<number> {
  if (!Number.isSafeInteger(options.retentionMs) || options.retentionMs < 0)
    throw new TypeError('retentionMs must be a non-negative integer');
  const now = options.now ?? Date.now;
  const limit = options.batchSize ?? 500;
  const before = now() - options.retentionMs;
  let total = 0;
  for (;;) {
    const deleted = await store.purgeArchived({ before, deletedAt: now(), limit });
    total += deleted;
    if (deleted < limit) return total;
  }
}
