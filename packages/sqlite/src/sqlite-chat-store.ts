// Types only from the root entry: a session-only process that loads this package never loads the chat's modules.
import type { AddMessageResult, ChatStore, StorageQuota, WorkingMemory, WorkingMemoryChange } from '@deskpilot/core';
import type { StatementSync } from 'node:sqlite';
import { chatSessionColumns, chatSessionFromRow, messageFromRow } from '@deskpilot/core/storage';
import type { SqliteDatabase } from './open-sqlite-database.js';
import { canBeStored, jsonAsText, type Row } from './read-row.js';

type UIMessage = Awaited<ReturnType<ChatStore['getMessages']>>[number];
type SessionInit = Parameters<ChatStore['getOrCreateSession']>[0];

const columns = chatSessionColumns.join(', ');
const toSession = (row: Row) => chatSessionFromRow(row, jsonAsText);
const toMessage = (row: Row) => messageFromRow(row, jsonAsText);

/** The notes after `change` (removals, then the keys set), or null when they would not fit its `maxBytes` (core's rule). */
function applyWorkingMemoryChange(memory: WorkingMemory, change: WorkingMemoryChange): WorkingMemory | null {
  const next: WorkingMemory = { ...memory };
  for (const key of change.remove ?? []) delete next[key];
  for (const [key, value] of Object.entries(change.set ?? {})) next[key] = value;
  return Buffer.byteLength(JSON.stringify(next)) <= change.maxBytes ? next : null;
}

/** In a transaction: `addMessage`'s answer, and the message saved when it is new and fits. */
function addIn(
  sql: (text: string) => StatementSync,
  sessionId: string,
  message: UIMessage,
  quota: StorageQuota | undefined,
): AddMessageResult {
  const existing = sql('SELECT id, message FROM deskpilot_chat_messages WHERE session_id = ? AND id = ?').get(
    sessionId,
    message.id,
  );
  if (existing) return { added: false, existing: toMessage(existing) };
  const text = JSON.stringify(message);
  const bytes = Buffer.byteLength(text);
  if (quota) {
    const stored = sql(
      `SELECT (SELECT coalesce(sum(bytes), 0) FROM deskpilot_chat_messages WHERE session_id = ?1) AS conversation,
         (SELECT coalesce(sum(m.bytes), 0) FROM deskpilot_chat_messages m JOIN deskpilot_chat_sessions s ON s.id = m.session_id
          WHERE s.user_email = (SELECT user_email FROM deskpilot_chat_sessions WHERE id = ?1)) AS user`,
    ).get(sessionId)!;
    if (Number(stored.conversation) + bytes > quota.conversationBytes)
      return { added: false, quotaExceeded: 'conversationBytes' };
    if (Number(stored.user) + bytes > quota.userBytes) return { added: false, quotaExceeded: 'userBytes' };
  }
  sql('INSERT INTO deskpilot_chat_messages (session_id, id, message, bytes) VALUES (?, ?, ?, ?)').run(
    sessionId,
    message.id,
    text,
    bytes,
  );
  return { added: true };
}

/**
 * Creates a {@link ChatStore} on SQLite. Each operation is a few statements run synchronously, in one
 * write transaction where it reads before it writes (`BEGIN IMMEDIATE`: no other process writes in
 * between), so create-if-new, the quota checks and working-memory changes are atomic here and across
 * processes sharing the file. A message keeps the position of its first save.
 *
 * @example
 * const chats = createSqliteChatStore(database);
 */
export function createSqliteChatStore(database: SqliteDatabase): ChatStore {
  const sql = (text: string) => database.statement(text);
  const selectSession = (id: string) => sql(`SELECT ${columns} FROM deskpilot_chat_sessions WHERE id = ?`).get(id);
  const selectMessages = (sessionId: string) =>
    sql('SELECT id, message FROM deskpilot_chat_messages WHERE session_id = ? ORDER BY position')
      .all(sessionId)
      .map(toMessage);
  const upsert = (sessionId: string, message: UIMessage) => {
    const text = JSON.stringify(message);
    sql(
      `INSERT INTO deskpilot_chat_messages (session_id, id, message, bytes) VALUES (?, ?, ?, ?)
       ON CONFLICT (session_id, id) DO UPDATE SET message = excluded.message, bytes = excluded.bytes`,
    ).run(sessionId, message.id, text, Buffer.byteLength(text));
  };

  /** In a transaction: the session with `init.id`, created when new. */
  const getOrCreate = (init: SessionInit) => {
    const created = sql(
      `INSERT INTO deskpilot_chat_sessions (${columns}) VALUES (?, ?, ?, '{}', NULL, ?, ?, 1)
       ON CONFLICT (id) DO NOTHING RETURNING ${columns}`,
    ).get(init.id, init.userEmail, init.projectKey, init.createdAt, init.updatedAt);
    return created
      ? { session: toSession(created), created: true }
      : { session: toSession(selectSession(init.id)!), created: false };
  };

  const add = (sessionId: string, message: UIMessage, quota: StorageQuota | undefined) =>
    addIn(sql, sessionId, message, quota);

  const getSession = async (id: string) => {
    if (!canBeStored(id)) return null;
    const row = database.run(() => selectSession(id));
    return row ? toSession(row) : null;
  };

  return {
    getOrCreateSession: async (init) => database.transaction(() => getOrCreate(init)),
    async openSession(init, message, quota) {
      return database.transaction(() => {
        const { session, created } = getOrCreate(init);
        const owned = session.userEmail === init.userEmail && session.projectKey === init.projectKey;
        if (!owned) return { session, created, messages: null };
        const messages = created ? [] : selectMessages(session.id);
        return message
          ? { session, created, messages, added: add(session.id, message, quota) }
          : { session, created, messages };
      });
    },
    async saveTurn(sessionId, message, update) {
      database.transaction(() => {
        upsert(sessionId, message);
        sql(
          'UPDATE deskpilot_chat_sessions SET last_turn_status = ?, updated_at = ?, version = version + 1 WHERE id = ?',
        ).run(update.lastTurnStatus, update.updatedAt, sessionId);
      });
    },
    getSession,
    async updateSession(id, update) {
      if (!canBeStored(id)) return { ok: false, reason: 'not_found' };
      return database.transaction(() => {
        const row = selectSession(id);
        if (!row) return { ok: false, reason: 'not_found' } as const;
        const session = toSession(row);
        const workingMemory = update.workingMemory
          ? applyWorkingMemoryChange(session.workingMemory, update.workingMemory)
          : session.workingMemory;
        if (!workingMemory) return { ok: false, reason: 'working_memory_full' } as const;
        const next = sql(
          `UPDATE deskpilot_chat_sessions SET working_memory = ?, last_turn_status = coalesce(?, last_turn_status),
             updated_at = ?, version = version + 1 WHERE id = ? RETURNING ${columns}`,
        ).get(JSON.stringify(workingMemory), update.lastTurnStatus ?? null, update.updatedAt, id)!;
        return { ok: true, session: toSession(next) } as const;
      });
    },
    getMessages: async (sessionId) => (canBeStored(sessionId) ? database.run(() => selectMessages(sessionId)) : []),
    addMessage: async (sessionId, message, quota) => database.transaction(() => add(sessionId, message, quota)),
    async upsertMessages(sessionId, messages) {
      if (messages.length === 0) return;
      database.transaction(() => {
        for (const message of messages) upsert(sessionId, message);
      });
    },
  };
}
