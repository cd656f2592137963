import type { UIMessage } from 'ai';
import { utf8ByteLength } from '../../validation/utf8-byte-length.js';
import type { ChatSessionRecord, ChatStore, StorageQuota } from './chat-store.js';
import { applyWorkingMemoryChange } from './working-memory.js';

/** The fields of a new record that `init` gives (and nothing else a caller's object may carry). */
const pick = ({ id, userEmail, projectKey, createdAt, updatedAt }: Parameters<ChatStore['getOrCreateSession']>[0]) => ({
  id,
  userEmail,
  projectKey,
  createdAt,
  updatedAt,
});

const sizeOf = (message: UIMessage) => utf8ByteLength(JSON.stringify(message));

/** Bytes stored per message (what the storage quotas count), and their sums per conversation and per user. */
function createSizeLedger(ownerOf: (sessionId: string) => string | undefined) {
  const sizes = new Map<string, Map<string, number>>();
  const conversationBytes = new Map<string, number>();
  const userBytes = new Map<string, number>();
  return {
    /** Records `id`'s size in `sessionId` (replacing what it was). */
    count(sessionId: string, id: string, bytes: number) {
      let stored = sizes.get(sessionId);
      if (!stored) sizes.set(sessionId, (stored = new Map()));
      const delta = bytes - (stored.get(id) ?? 0);
      stored.set(id, bytes);
      conversationBytes.set(sessionId, (conversationBytes.get(sessionId) ?? 0) + delta);
      const owner = ownerOf(sessionId);
      if (owner !== undefined) userBytes.set(owner, (userBytes.get(owner) ?? 0) + delta);
    },
    /** The quota a new message of `bytes` would pass, if any. */
    exceeded(sessionId: string, bytes: number, quota: StorageQuota | undefined): keyof StorageQuota | undefined {
      if (!quota) return undefined;
      if ((conversationBytes.get(sessionId) ?? 0) + bytes > quota.conversationBytes) return 'conversationBytes';
      const owner = ownerOf(sessionId);
      if (owner !== undefined && (userBytes.get(owner) ?? 0) + bytes > quota.userBytes) return 'userBytes';
      return undefined;
    },
  };
}

/** A {@link ChatStore} in process memory: for tests, demos and single-process servers. */
export interface MemoryChatStore extends ChatStore {
  /** Every stored session in creation order, and messages by session id (copies), for inspection in tests. */
  dump(): { sessions: ChatSessionRecord[]; messages: Record<string, UIMessage[]> };
}

/**
 * Creates an in-memory {@link ChatStore}. Records and messages are copied on the way in and out, so
 * callers can never mutate stored state (messages are JSON, working memory is nested).
 *
 * @example
 * const store = createMemoryChatStore();
 */
export function createMemoryChatStore(): MemoryChatStore {
  const sessions = new Map<string, ChatSessionRecord>();
  // A Map keeps insertion order and `set` on a known key keeps its place: exactly the upsert contract.
  const messagesBySession = new Map<string, Map<string, UIMessage>>();
  const sizes = createSizeLedger((sessionId) => sessions.get(sessionId)?.userEmail);
  const upsertInto = (sessionId: string, messages: UIMessage[]) => {
    let stored = messagesBySession.get(sessionId);
    if (!stored) messagesBySession.set(sessionId, (stored = new Map()));
    for (const message of messages) {
      stored.set(message.id, structuredClone(message));
      sizes.count(sessionId, message.id, sizeOf(message));
    }
  };

  const store: MemoryChatStore = {
    async getOrCreateSession(init) {
      // No await between the check and the write: concurrent calls cannot both create.
      const existing = sessions.get(init.id);
      if (existing) return { session: structuredClone(existing), created: false };
      const session: ChatSessionRecord = { ...pick(init), workingMemory: {}, lastTurnStatus: null, version: 1 };
      sessions.set(session.id, session);
      return { session: structuredClone(session), created: true };
    },
    async openSession(init, add, quota) {
      const { session, created } = await store.getOrCreateSession(init);
      const owned = session.userEmail === init.userEmail && session.projectKey === init.projectKey;
      if (!owned) return { session, created, messages: null };
      const messages = await store.getMessages(session.id);
      return add
        ? { session, created, messages, added: await store.addMessage(session.id, add, quota) }
        : { session, created, messages };
    },
    async saveTurn(sessionId, message, update) {
      // No await in here: the two writes land together.
      const session = sessions.get(sessionId);
      if (session)
        sessions.set(sessionId, {
          ...session,
          lastTurnStatus: update.lastTurnStatus,
          updatedAt: update.updatedAt,
          version: session.version + 1,
        });
      upsertInto(sessionId, [message]);
    },
    async getSession(id) {
      const session = sessions.get(id);
      return session ? structuredClone(session) : null;
    },
    async updateSession(id, update) {
      // No await in here: the read and the write of one update cannot interleave with another's.
      const session = sessions.get(id);
      if (!session) return { ok: false, reason: 'not_found' };
      const workingMemory = update.workingMemory
        ? applyWorkingMemoryChange(session.workingMemory, update.workingMemory)
        : session.workingMemory;
      if (!workingMemory) return { ok: false, reason: 'working_memory_full' };
      // An absent or undefined field means "keep": callers spread optional patches into the update.
      const next: ChatSessionRecord = {
        ...session,
        workingMemory: structuredClone(workingMemory),
        lastTurnStatus: update.lastTurnStatus === undefined ? session.lastTurnStatus : update.lastTurnStatus,
        updatedAt: update.updatedAt,
        version: session.version + 1,
      };
      sessions.set(id, next);
      return { ok: true, session: structuredClone(next) };
    },
    async getMessages(sessionId) {
      return [...(messagesBySession.get(sessionId)?.values() ?? [])].map((message) => structuredClone(message));
    },
    async addMessage(sessionId, message, quota) {
      // No await in here: the quota check and the write cannot interleave with another add.
      let stored = messagesBySession.get(sessionId);
      if (!stored) messagesBySession.set(sessionId, (stored = new Map()));
      const existing = stored.get(message.id);
      if (existing) return { added: false, existing: structuredClone(existing) };
      const bytes = sizeOf(message);
      const quotaExceeded = sizes.exceeded(sessionId, bytes, quota);
      if (quotaExceeded) return { added: false, quotaExceeded };
      stored.set(message.id, structuredClone(message));
      sizes.count(sessionId, message.id, bytes);
      return { added: true };
    },
    async upsertMessages(sessionId, messages) {
      upsertInto(sessionId, messages);
    },
    dump() {
      const messages: Record<string, UIMessage[]> = {};
      for (const [sessionId, stored] of messagesBySession)
        messages[sessionId] = [...stored.values()].map((message) => structuredClone(message));
      return { sessions: [...sessions.values()].map((session) => structuredClone(session)), messages };
    },
  };
  return store;
}
