// Types only from the chat's entry: a session-only process that loads this package never loads the chat's modules.
import type {
  AddMessageResult,
  ChatSessionInit,
  ChatStore,
  ConversationQuery,
  StorageQuota,
  WorkingMemory,
  WorkingMemoryChange,
} from '@deskpilot/core/chat';
import { DeskpilotError } from '@deskpilot/core/session';
import type { StatementSync } from 'node:sqlite';
import {
  branchTo,
  chatSessionColumns,
  chatSessionFromRow,
  firstMessageParent,
  isOnActiveBranch,
  messageFromRow,
  messagePreview,
  messageTreeFromRows,
} from '@deskpilot/core/storage';
import type { SqliteDatabase } from './open-sqlite-database.js';
import { canBeStored, jsonAsText, type Row } from './read-row.js';

type UIMessage = Awaited<ReturnType<ChatStore['getMessages']>>[number];
type SessionInit = ChatSessionInit;

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

// The preview of a conversation's last message, from the index that carries it (the row is read only
// for one written before schema 5, without a preview: its text computed from the message).
const lastMessageTextSql = `(SELECT nullif(CASE WHEN last.preview IS NOT NULL THEN last.preview ELSE
    (SELECT coalesce(substr(group_concat(json_extract(part.value, '$.text'), char(10) ORDER BY part.key), 1, 200), '')
     FROM deskpilot_chat_messages legacy, json_each(legacy.message, '$.parts') AS part
     WHERE legacy.position = last.position AND json_extract(part.value, '$.type') = 'text') END, '')
  FROM (SELECT position, preview FROM deskpilot_chat_messages WHERE session_id = s.id ORDER BY position DESC LIMIT 1) AS last)`;

// One statement per case, not one with flags: each matches its partial index, and the cursor is a
// row-value comparison in the index's order, so a page deep in the list is an index range, not a scan.
const listSql = (
  archived: boolean,
  after: boolean,
) => `SELECT ${chatSessionColumns.map((column) => `s.${column}`).join(', ')}, ${lastMessageTextSql} AS last_message_text
  FROM deskpilot_chat_sessions s
  WHERE s.user_email = ?1 AND s.project_key = ?2 AND s.archived_at IS ${archived ? 'NOT NULL' : 'NULL'} AND s.deleted_at IS NULL
    ${after ? 'AND (s.updated_at, s.id) < (?3, ?4)' : ''}
  ORDER BY s.updated_at DESC, s.id DESC LIMIT ?5`;

const deletedConflict = () => new DeskpilotError('conflict', { detail: 'The conversation was deleted.' });

/** Where a new message goes: after `parentId` (a new branch, made the active one), else on the active branch, answering `after`. */
interface Placement {
  parentId?: string | null | undefined;
  after?: string | undefined;
}

/**
 * In a transaction: inserts a new message at the end of the active branch, or after `parentId` (a new
 * branch, made the active one), or — an answer whose question `after` is no longer on the active
 * branch — right after `after`, leaving the active branch as it is. Where the newest message ends the
 * active branch (no `active_message_id`: nobody branched), the parent stays implicit (NULL).
 */
function insertMessage(
  sql: (text: string) => StatementSync,
  sessionId: string,
  message: UIMessage,
  placement: Placement = {},
): boolean {
  const text = JSON.stringify(message);
  const end = sql('SELECT active_message_id FROM deskpilot_chat_sessions WHERE id = ?').get(
    sessionId,
  )?.active_message_id;
  const active = typeof end === 'string' ? end : null;
  // An answer whose question `after` is stored but no longer on the active branch goes right after it.
  const rows =
    placement.parentId === undefined && placement.after !== undefined && active !== null && placement.after !== active
      ? sql('SELECT id, parent_id FROM deskpilot_chat_messages WHERE session_id = ? ORDER BY position').all(sessionId)
      : [];
  const offBranch = rows.some((row) => row.id === placement.after) && !isOnActiveBranch(rows, active, placement.after!);
  const parent = offBranch
    ? placement.after!
    : placement.parentId === undefined
      ? active
      : (placement.parentId ?? firstMessageParent);
  sql(
    'INSERT INTO deskpilot_chat_messages (session_id, id, message, bytes, parent_id, preview) VALUES (?, ?, ?, ?, ?, ?)',
  ).run(sessionId, message.id, text, Buffer.byteLength(text), parent, messagePreview(message));
  if (parent !== null && !offBranch)
    sql('UPDATE deskpilot_chat_sessions SET active_message_id = ? WHERE id = ?').run(message.id, sessionId);
  return !offBranch;
}

/** In a transaction: `addMessage`'s answer, and the message saved when it is new and fits. */
function addIn(
  sql: (text: string) => StatementSync,
  sessionId: string,
  message: UIMessage,
  quota: StorageQuota | undefined,
  parentId?: string | null,
): AddMessageResult {
  const session = sql('SELECT deleted_at FROM deskpilot_chat_sessions WHERE id = ?').get(sessionId);
  if (session && session.deleted_at !== null) throw deletedConflict();
  const existing = sql('SELECT id, message FROM deskpilot_chat_messages WHERE session_id = ? AND id = ?').get(
    sessionId,
    message.id,
  );
  if (existing) return { added: false, existing: toMessage(existing) };
  const text = JSON.stringify(message);
  const bytes = Buffer.byteLength(text);
  if (quota) {
    // Running totals, kept by triggers with every write to a message (schema 17): one row each.
    const stored = sql(
      `SELECT coalesce((SELECT bytes FROM deskpilot_chat_conversation_bytes WHERE session_id = ?1), 0) AS conversation,
         coalesce((SELECT bytes FROM deskpilot_chat_user_bytes
          WHERE user_email = (SELECT user_email FROM deskpilot_chat_sessions WHERE id = ?1)), 0) AS user`,
    ).get(sessionId)!;
    if (Number(stored.conversation) + bytes > quota.conversationBytes)
      return { added: false, quotaExceeded: 'conversationBytes' };
    if (Number(stored.user) + bytes > quota.userBytes) return { added: false, quotaExceeded: 'userBytes' };
  }
  insertMessage(sql, sessionId, message, { parentId });
  return { added: true };
}

type ConversationMethods = Required<
  Pick<
    ChatStore,
    | 'listSessions'
    | 'updateConversation'
    | 'deleteSession'
    | 'discardEmptySession'
    | 'purgeArchived'
    | 'markRunningTurn'
    | 'clearRunningTurn'
    | 'abortRunningTurns'
  >
>;

/** The list, rename, archive and delete methods. */
function conversationMethods(database: SqliteDatabase): ConversationMethods {
  const sql = (text: string) => database.statement(text);
  /** In a transaction: tombstones the conversation when it is live. */
  const remove = (id: string, deletedAt: number) => {
    const { changes } = sql(
      `UPDATE deskpilot_chat_sessions
       SET deleted_at = ?, working_memory = '{}', title = NULL, active_message_id = NULL, version = version + 1
       WHERE id = ? AND deleted_at IS NULL`,
    ).run(deletedAt, id);
    if (changes === 0) return false;
    sql('DELETE FROM deskpilot_chat_messages WHERE session_id = ?').run(id);
    return true;
  };
  return {
    async listSessions(query: ConversationQuery) {
      if (!canBeStored(query.userEmail) || !canBeStored(query.projectKey)) return [];
      const rows = database.run(() =>
        // ?3 and ?4 exist (numbered up to ?5) whether or not the statement reads them.
        sql(listSql(query.archived, query.after !== undefined)).all(
          query.userEmail,
          query.projectKey,
          query.after?.updatedAt ?? null,
          query.after?.id ?? null,
          query.limit,
        ),
      );
      return rows.map((row) => ({
        session: toSession(row),
        lastMessageText: row.last_message_text === null ? null : String(row.last_message_text),
      }));
    },
    async updateConversation(id, change) {
      if (!canBeStored(id)) return null;
      const row = database.run(() =>
        sql(
          `UPDATE deskpilot_chat_sessions
         SET title = CASE WHEN ?2 IS NULL OR (?3 AND title IS NOT NULL) THEN title ELSE ?2 END,
           archived_at = CASE WHEN ?4 THEN ?5 ELSE archived_at END, version = version + 1
         WHERE id = ?1 AND deleted_at IS NULL RETURNING ${columns}`,
        ).get(
          id,
          change.title ?? null,
          change.onlyIfUntitled ? 1 : 0,
          change.archivedAt === undefined ? 0 : 1,
          change.archivedAt ?? null,
        ),
      );
      return row ? toSession(row) : null;
    },
    deleteSession: async (id, deletedAt) => canBeStored(id) && database.transaction(() => remove(id, deletedAt)),
    async markRunningTurn(sessionId, turnId) {
      if (!canBeStored(sessionId) || !canBeStored(turnId)) return;
      database.run(() =>
        sql(
          `INSERT INTO deskpilot_running_turns (session_id, turn_id)
           SELECT id, ?2 FROM deskpilot_chat_sessions WHERE id = ?1 AND deleted_at IS NULL
           ON CONFLICT (session_id) DO UPDATE SET turn_id = excluded.turn_id`,
        ).run(sessionId, turnId),
      );
    },
    async clearRunningTurn(sessionId, turnId) {
      if (!canBeStored(sessionId) || !canBeStored(turnId)) return;
      database.run(() =>
        sql('DELETE FROM deskpilot_running_turns WHERE session_id = ? AND turn_id = ?').run(sessionId, turnId),
      );
    },
    async abortRunningTurns(now) {
      return database.transaction(() => {
        const rows = sql(
          `UPDATE deskpilot_chat_sessions SET last_turn_status = 'aborted', updated_at = ?, version = version + 1
           WHERE deleted_at IS NULL AND id IN (SELECT session_id FROM deskpilot_running_turns) RETURNING id`,
        ).all(now);
        sql('DELETE FROM deskpilot_running_turns').run();
        return rows.map((row) => String(row.id));
      });
    },
    async discardEmptySession(id) {
      if (!canBeStored(id)) return false;
      const { changes } = database.run(() =>
        sql(
          `DELETE FROM deskpilot_chat_sessions WHERE id = ?1 AND deleted_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM deskpilot_chat_messages WHERE session_id = ?1)`,
        ).run(id),
      );
      return Number(changes) === 1;
    },
    async purgeArchived({ before, deletedAt, limit }) {
      return database.transaction(() => {
        const ids = sql(
          `SELECT id FROM deskpilot_chat_sessions
         WHERE archived_at IS NOT NULL AND deleted_at IS NULL AND archived_at < ?1 AND updated_at < ?1 LIMIT ?2`,
        ).all(before, limit);
        for (const { id } of ids) remove(String(id), deletedAt);
        return ids.length;
      });
    },
  };
}

/** Every message of a conversation with its parent, and where its active branch ends. */
function selectTree(sql: (text: string) => StatementSync, sessionId: string) {
  const rows = sql(
    `SELECT m.id, m.parent_id, m.message, s.active_message_id FROM deskpilot_chat_messages m
     JOIN deskpilot_chat_sessions s ON s.id = m.session_id WHERE m.session_id = ? ORDER BY m.position`,
  ).all(sessionId);
  const end = rows[0]?.active_message_id;
  return messageTreeFromRows(rows, typeof end === 'string' ? end : null, jsonAsText);
}

/** A conversation's active branch, first message first. */
function activeBranch(sql: (text: string) => StatementSync, sessionId: string) {
  const tree = selectTree(sql, sessionId);
  return branchTo(tree, tree.activeId);
}

/** The reads of a conversation's branches, and the switch between them. */
function branchMethods(
  database: SqliteDatabase,
): Pick<ChatStore, 'getMessages' | 'getMessageTree' | 'setActiveMessage'> {
  const sql = (text: string) => database.statement(text);
  return {
    getMessages: async (sessionId) => (canBeStored(sessionId) ? database.run(() => activeBranch(sql, sessionId)) : []),
    getMessageTree: async (sessionId) =>
      canBeStored(sessionId) ? database.run(() => selectTree(sql, sessionId)) : { messages: [], activeId: null },
    async setActiveMessage(sessionId, messageId) {
      if (!canBeStored(sessionId) || !canBeStored(messageId)) return false;
      const { changes } = database.run(() =>
        sql(
          `UPDATE deskpilot_chat_sessions SET active_message_id = ?2 WHERE id = ?1 AND deleted_at IS NULL
           AND EXISTS (SELECT 1 FROM deskpilot_chat_messages WHERE session_id = ?1 AND id = ?2)`,
        ).run(sessionId, messageId),
      );
      return changes > 0;
    },
  };
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
  const isDeleted = (sessionId: string) =>
    sql('SELECT 1 FROM deskpilot_chat_sessions WHERE id = ? AND deleted_at IS NOT NULL').get(sessionId) !== undefined;
  /** A known message is replaced in place; false when a new one went off the active branch. */
  const upsert = (sessionId: string, message: UIMessage, after?: string): boolean => {
    const text = JSON.stringify(message);
    const { changes } = sql(
      'UPDATE deskpilot_chat_messages SET message = ?, bytes = ?, preview = ? WHERE session_id = ? AND id = ?',
    ).run(text, Buffer.byteLength(text), messagePreview(message), sessionId, message.id);
    return changes > 0 || insertMessage(sql, sessionId, message, { after });
  };

  /** In a transaction: the session with `init.id`, created when new. */
  const getOrCreate = (init: SessionInit) => {
    const created = sql(
      `INSERT INTO deskpilot_chat_sessions (${columns}) VALUES (?, ?, ?, '{}', NULL, ?, ?, 1, NULL, NULL, NULL)
       ON CONFLICT (id) DO NOTHING RETURNING ${columns}`,
    ).get(init.id, init.userEmail, init.projectKey, init.createdAt, init.updatedAt);
    return created
      ? { session: toSession(created), created: true }
      : { session: toSession(selectSession(init.id)!), created: false };
  };

  const add = (sessionId: string, message: UIMessage, quota: StorageQuota | undefined, parentId?: string | null) =>
    addIn(sql, sessionId, message, quota, parentId);

  const getSession = async (id: string) => {
    if (!canBeStored(id)) return null;
    const row = database.run(() => selectSession(id));
    return row ? toSession(row) : null;
  };

  return {
    ...conversationMethods(database),
    ...branchMethods(database),
    getOrCreateSession: async (init) => database.transaction(() => getOrCreate(init)),
    async openSession(init, message, quota) {
      return database.transaction(() => {
        const { session, created } = getOrCreate(init);
        const owned = session.userEmail === init.userEmail && session.projectKey === init.projectKey;
        if (!owned) return { session, created, messages: null };
        const messages = created ? [] : activeBranch(sql, session.id);
        return message && session.deletedAt === null
          ? { session, created, messages, added: add(session.id, message, quota) }
          : { session, created, messages };
      });
    },
    async saveTurn(sessionId, message, update, after) {
      database.transaction(() => {
        if (isDeleted(sessionId)) return;
        // An answer saved off the branch shown (its question was edited away) is not the conversation's status.
        if (!upsert(sessionId, message, after)) return;
        sql(
          `UPDATE deskpilot_chat_sessions SET last_turn_status = ?, updated_at = ?, version = version + 1,
             title = coalesce(title, ?) WHERE id = ?`,
        ).run(update.lastTurnStatus, update.updatedAt, update.title ?? null, sessionId);
      });
    },
    getSession,
    async storedBytes(owner) {
      const key = 'sessionId' in owner ? owner.sessionId : owner.userEmail;
      if (!canBeStored(key)) return 0;
      const row = database.run(() =>
        sql(
          'sessionId' in owner
            ? 'SELECT bytes FROM deskpilot_chat_conversation_bytes WHERE session_id = ?'
            : 'SELECT bytes FROM deskpilot_chat_user_bytes WHERE user_email = ?',
        ).get(key),
      );
      return Number(row?.bytes ?? 0);
    },
    async updateSession(id, update) {
      if (!canBeStored(id)) return { ok: false, reason: 'not_found' };
      return database.transaction(() => {
        const row = selectSession(id);
        if (!row || row.deleted_at !== null) return { ok: false, reason: 'not_found' } as const;
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
    addMessage: async (sessionId, message, quota, parentId) =>
      database.transaction(() => add(sessionId, message, quota, parentId)),
    async upsertMessages(sessionId, messages, after) {
      if (messages.length === 0) return;
      database.transaction(() => {
        if (isDeleted(sessionId)) return;
        // A batch's later messages follow its earlier ones.
        for (const [index, message] of messages.entries())
          upsert(sessionId, message, index === 0 ? after : messages[index - 1]!.id);
      });
    },
  };
}
