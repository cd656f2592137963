import type { UIMessage } from 'ai';
import type { ChatSessionRecord, ChatStore } from './chat-store.js';
import { applyWorkingMemoryChange } from './working-memory.js';

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
  const upsertInto = (sessionId: string, messages: UIMessage[]) => {
    let stored = messagesBySession.get(sessionId);
    if (!stored) messagesBySession.set(sessionId, (stored = new Map()));
    for (const message of messages) stored.set(message.id, structuredClone(message));
  };

  const store: MemoryChatStore = {
    async getOrCreateSession(init) {
      // No await between the check and the write: concurrent calls cannot both create.
      const existing = sessions.get(init.id);
      if (existing) return { session: structuredClone(existing), created: false };
      const session: ChatSessionRecord = {
        id: init.id,
        userEmail: init.userEmail,
        projectKey: init.projectKey,
        workingMemory: {},
        lastTurnStatus: null,
        createdAt: init.createdAt,
        updatedAt: init.updatedAt,
        version: 1,
      };
      sessions.set(session.id, session);
      return { session: structuredClone(session), created: true };
    },
    async openSession(init, add) {
      const { session, created } = await store.getOrCreateSession(init);
      const owned = session.userEmail === init.userEmail && session.projectKey === init.projectKey;
      if (!owned) return { session, created, messages: null };
      const messages = await store.getMessages(session.id);
      return add ? { session, created, messages, added: await store.addMessage(session.id, add) } : { session, created, messages };
    },
    async saveTurn(sessionId, message, update) {
      // No await in here: the two writes land together.
      const session = sessions.get(sessionId);
      if (session) sessions.set(sessionId, { ...session, lastTurnStatus: update.lastTurnStatus, updatedAt: update.updatedAt, version: session.version + 1 });
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
      const workingMemory = update.workingMemory ? applyWorkingMemoryChange(session.workingMemory, update.workingMemory) : session.workingMemory;
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
    async addMessage(sessionId, message) {
      let stored = messagesBySession.get(sessionId);
      if (!stored) messagesBySession.set(sessionId, (stored = new Map()));
      const existing = stored.get(message.id);
      if (existing) return { added: false, existing: structuredClone(existing) };
      stored.set(message.id, structuredClone(message));
      return { added: true };
    },
    async upsertMessages(sessionId, messages) {
      upsertInto(sessionId, messages);
    },
    dump() {
      const messages: Record<string, UIMessage[]> = {};
      for (const [sessionId, stored] of messagesBySession) messages[sessionId] = [...stored.values()].map((message) => structuredClone(message));
      return { sessions: [...sessions.values()].map((session) => structuredClone(session)), messages };
    },
  };
  return store;
}
