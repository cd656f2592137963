import type { UIMessage } from 'ai';
import { utf8ByteLength } from '../../validation/utf8-byte-length.js';
import { DeskpilotError } from '../../errors/deskpilot-error.js';
import { messagePreview } from './message-preview.js';
import type { ChatSessionInit, ChatSessionRecord, ChatStore, ConversationQuery, StorageQuota } from './chat-store.js';
import { branchTo, type MessageTree } from './message-tree.js';
import { applyWorkingMemoryChange } from './working-memory.js';

/** The fields of a new record that `init` gives (and nothing else a caller's object may carry). */
const pick = ({ id, userEmail, projectKey, createdAt, updatedAt }: ChatSessionInit) => ({
  id,
  userEmail,
  projectKey,
  createdAt,
  updatedAt,
});

/** A new conversation's record. */
const newRecord = (init: ChatSessionInit): ChatSessionRecord => ({
  ...pick(init),
  workingMemory: {},
  lastTurnStatus: null,
  version: 1,
  title: null,
  archivedAt: null,
  deletedAt: null,
});

const sizeOf = (message: UIMessage) => utf8ByteLength(JSON.stringify(message));

/** The preview of the last message: its text, as the SQL stores keep it (null without text). */
function textOf(message: UIMessage | undefined): string | null {
  return (message && messagePreview(message)) || null;
}

/** Whether `session` is in the list `query` asks for, after its cursor. */
function listed(session: ChatSessionRecord, query: ConversationQuery): boolean {
  if (session.deletedAt !== null || session.userEmail !== query.userEmail || session.projectKey !== query.projectKey)
    return false;
  if ((session.archivedAt !== null) !== query.archived) return false;
  const { after } = query;
  return (
    !after || session.updatedAt < after.updatedAt || (session.updatedAt === after.updatedAt && session.id < after.id)
  );
}

/** Newest activity first, then the greater id. */
const byActivity = (a: ChatSessionRecord, b: ChatSessionRecord) =>
  b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

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
    /** Forgets every message of `sessionId` (deleted). */
    forget(sessionId: string) {
      for (const id of sizes.get(sessionId)?.keys() ?? []) this.count(sessionId, id, 0);
      sizes.delete(sessionId);
      conversationBytes.delete(sessionId);
    },
    /** What a conversation or a user has stored. */
    of(owner: { sessionId: string } | { userEmail: string }): number {
      return ('sessionId' in owner ? conversationBytes.get(owner.sessionId) : userBytes.get(owner.userEmail)) ?? 0;
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

/** Whether `id` is on the branch that ends at `end` (following parents). */
function onBranch(parents: ReadonlyMap<string, string | null>, end: string | null, id: string): boolean {
  for (let at = end, steps = 0; at !== null && steps <= parents.size; at = parents.get(at) ?? null, steps++)
    if (at === id) return true;
  return false;
}

/** Each message's parent, and where the active branch ends, per conversation. */
function createBranchLedger() {
  const parents = new Map<string, Map<string, string | null>>();
  const ends = new Map<string, string>();
  return {
    /**
     * Records a new message: after `parentId` when given (a new branch, made the active one), else at
     * the end of the active branch — unless it answers `after`, a message no longer on it: then right
     * after `after`, the active branch left as it is. False in that last case.
     */
    place(sessionId: string, id: string, parentId?: string | null, after?: string): boolean {
      let stored = parents.get(sessionId);
      if (!stored) parents.set(sessionId, (stored = new Map()));
      const end = ends.get(sessionId) ?? null;
      if (parentId === undefined && after !== undefined && stored.has(after) && !onBranch(stored, end, after)) {
        stored.set(id, after);
        return false;
      }
      stored.set(id, parentId === undefined ? end : parentId);
      ends.set(sessionId, id);
      return true;
    },
    /** The active branch ends at `id` when it is a message of the conversation. */
    select(sessionId: string, id: string): boolean {
      if (!parents.get(sessionId)?.has(id)) return false;
      ends.set(sessionId, id);
      return true;
    },
    tree(sessionId: string, messages: Iterable<UIMessage>): MessageTree {
      const stored = parents.get(sessionId);
      return {
        messages: [...messages].map((message) => ({
          message: structuredClone(message),
          parentId: stored?.get(message.id) ?? null,
        })),
        activeId: ends.get(sessionId) ?? null,
      };
    },
    forget(sessionId: string) {
      parents.delete(sessionId);
      ends.delete(sessionId);
    },
  };
}

const deletedConflict = () => new DeskpilotError('conflict', { detail: 'The conversation was deleted.' });

type ConversationMethods = Required<
  Pick<ChatStore, 'listSessions' | 'updateConversation' | 'deleteSession' | 'discardEmptySession' | 'purgeArchived'>
>;

/** The list, rename, archive and delete methods over the memory store's maps. */
function conversationMethods(
  sessions: Map<string, ChatSessionRecord>,
  messagesBySession: Map<string, Map<string, UIMessage>>,
  sizes: ReturnType<typeof createSizeLedger>,
  branches: ReturnType<typeof createBranchLedger>,
): ConversationMethods {
  const methods: ConversationMethods = {
    async listSessions(query) {
      const page = [...sessions.values()].filter((session) => listed(session, query)).sort(byActivity);
      return page.slice(0, query.limit).map((session) => ({
        session: structuredClone(session),
        lastMessageText: textOf([...(messagesBySession.get(session.id)?.values() ?? [])].at(-1)),
      }));
    },
    async updateConversation(id, change) {
      const session = sessions.get(id);
      if (!session || session.deletedAt !== null) return null;
      const next: ChatSessionRecord = {
        ...session,
        title:
          change.title === undefined || (change.onlyIfUntitled && session.title !== null)
            ? session.title
            : change.title,
        archivedAt: change.archivedAt === undefined ? session.archivedAt : change.archivedAt,
        version: session.version + 1,
      };
      sessions.set(id, next);
      return structuredClone(next);
    },
    async deleteSession(id, deletedAt) {
      const session = sessions.get(id);
      if (!session || session.deletedAt !== null) return false;
      sessions.set(id, { ...session, workingMemory: {}, title: null, deletedAt, version: session.version + 1 });
      sizes.forget(id);
      branches.forget(id);
      messagesBySession.delete(id);
      return true;
    },
    async discardEmptySession(id) {
      // No await in here: a message added by another request is either in, or comes after.
      const session = sessions.get(id);
      if (!session || session.deletedAt !== null || (messagesBySession.get(id)?.size ?? 0) > 0) return false;
      sessions.delete(id);
      messagesBySession.delete(id);
      sizes.forget(id);
      branches.forget(id);
      return true;
    },
    async purgeArchived({ before, deletedAt, limit }) {
      const expired = [...sessions.values()]
        .filter((session) => session.deletedAt === null && session.archivedAt !== null)
        .filter((session) => session.archivedAt! < before && session.updatedAt < before)
        .slice(0, limit);
      for (const session of expired) await methods.deleteSession(session.id, deletedAt);
      return expired.length;
    },
  };
  return methods;
}

/** The marks of running turns, over the memory store's sessions (what a restart would abort). */
function runningTurnMethods(
  sessions: Map<string, ChatSessionRecord>,
): Required<Pick<ChatStore, 'markRunningTurn' | 'clearRunningTurn' | 'abortRunningTurns'>> {
  const runningTurns = new Map<string, string>();
  return {
    async markRunningTurn(sessionId, turnId) {
      if (sessions.get(sessionId)?.deletedAt === null) runningTurns.set(sessionId, turnId);
    },
    async clearRunningTurn(sessionId, turnId) {
      if (runningTurns.get(sessionId) === turnId) runningTurns.delete(sessionId);
    },
    async abortRunningTurns(now) {
      const aborted: string[] = [];
      for (const sessionId of runningTurns.keys()) {
        const session = sessions.get(sessionId);
        if (session && session.deletedAt === null) {
          sessions.set(sessionId, {
            ...session,
            lastTurnStatus: 'aborted',
            updatedAt: now,
            version: session.version + 1,
          });
          aborted.push(sessionId);
        }
      }
      runningTurns.clear();
      return aborted;
    },
  };
}

/** The reads of a conversation's branches, and the switch between them, over the memory store's maps. */
function branchMethods(
  sessions: Map<string, ChatSessionRecord>,
  messagesBySession: Map<string, Map<string, UIMessage>>,
  branches: ReturnType<typeof createBranchLedger>,
): Pick<ChatStore, 'getMessages' | 'getMessageTree' | 'setActiveMessage'> {
  const treeOf = (sessionId: string) => branches.tree(sessionId, messagesBySession.get(sessionId)?.values() ?? []);
  return {
    async getMessages(sessionId) {
      const tree = treeOf(sessionId);
      return branchTo(tree, tree.activeId);
    },
    getMessageTree: async (sessionId) => treeOf(sessionId),
    async setActiveMessage(sessionId, messageId) {
      return sessions.get(sessionId)?.deletedAt === null && branches.select(sessionId, messageId);
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
  const branches = createBranchLedger();
  /** Saves `messages` (a batch's later messages follow its earlier ones); false when a new one went off the active branch. */
  const upsertInto = (sessionId: string, messages: UIMessage[], after?: string): boolean => {
    let stored = messagesBySession.get(sessionId);
    if (!stored) messagesBySession.set(sessionId, (stored = new Map()));
    let shown = true;
    for (const [index, message] of messages.entries()) {
      if (!stored.has(message.id))
        shown =
          branches.place(sessionId, message.id, undefined, index === 0 ? after : messages[index - 1]!.id) && shown;
      stored.set(message.id, structuredClone(message));
      sizes.count(sessionId, message.id, sizeOf(message));
    }
    return shown;
  };

  const store: MemoryChatStore = {
    ...runningTurnMethods(sessions),
    ...conversationMethods(sessions, messagesBySession, sizes, branches),
    ...branchMethods(sessions, messagesBySession, branches),
    storedBytes: async (owner) => sizes.of(owner),
    async getOrCreateSession(init) {
      // No await between the check and the write: concurrent calls cannot both create.
      const existing = sessions.get(init.id);
      if (existing) return { session: structuredClone(existing), created: false };
      const session = newRecord(init);
      sessions.set(session.id, session);
      return { session: structuredClone(session), created: true };
    },
    async openSession(init, add, quota) {
      const { session, created } = await store.getOrCreateSession(init);
      const owned = session.userEmail === init.userEmail && session.projectKey === init.projectKey;
      if (!owned) return { session, created, messages: null };
      const messages = await store.getMessages(session.id);
      return add && session.deletedAt === null
        ? { session, created, messages, added: await store.addMessage(session.id, add, quota) }
        : { session, created, messages };
    },
    async saveTurn(sessionId, message, update, after) {
      // No await in here: the two writes land together.
      const session = sessions.get(sessionId);
      if (session?.deletedAt != null) return;
      // An answer saved off the branch shown (its question was edited away) is not the conversation's status.
      if (upsertInto(sessionId, [message], after) && session)
        sessions.set(sessionId, {
          ...session,
          lastTurnStatus: update.lastTurnStatus,
          updatedAt: update.updatedAt,
          version: session.version + 1,
          title: session.title ?? update.title ?? null,
        });
    },
    async getSession(id) {
      const session = sessions.get(id);
      return session ? structuredClone(session) : null;
    },

    async updateSession(id, update) {
      // No await in here: the read and the write of one update cannot interleave with another's.
      const session = sessions.get(id);
      if (!session || session.deletedAt !== null) return { ok: false, reason: 'not_found' };
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
    async addMessage(sessionId, message, quota, parentId) {
      // No await in here: the quota check and the write cannot interleave with another add.
      if (sessions.get(sessionId)?.deletedAt != null) throw deletedConflict();
      let stored = messagesBySession.get(sessionId);
      if (!stored) messagesBySession.set(sessionId, (stored = new Map()));
      const existing = stored.get(message.id);
      if (existing) return { added: false, existing: structuredClone(existing) };
      const bytes = sizeOf(message);
      const quotaExceeded = sizes.exceeded(sessionId, bytes, quota);
      if (quotaExceeded) return { added: false, quotaExceeded };
      stored.set(message.id, structuredClone(message));
      sizes.count(sessionId, message.id, bytes);
      branches.place(sessionId, message.id, parentId);
      return { added: true };
    },
    async upsertMessages(sessionId, messages, after) {
      if (sessions.get(sessionId)?.deletedAt != null) return;
      upsertInto(sessionId, messages, after);
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
