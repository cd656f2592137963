import type { AddMessageResult, ChatStore, OpenSessionResult, StorageQuota } from '@deskpilot/core/chat';
import { DeskpilotError } from '@deskpilot/core/session';
import {
  branchTo,
  chatSessionColumns,
  chatSessionFromRow,
  firstMessageParent,
  isJsonObject,
  isOnActiveBranch,
  messageFromRow,
  messageTreeFromRows,
  readStoredRow,
  type MessageTree,
} from '@deskpilot/core/storage';
import type { SqlClient, SqlExecutor, SqlRow } from './sql-client.js';

type UIMessage = Awaited<ReturnType<ChatStore['getMessages']>>[number];

const columns = chatSessionColumns.join(', ');
const toSession = (row: SqlRow) => chatSessionFromRow(row);

function isRowList(value: unknown): value is SqlRow[] {
  return Array.isArray(value) && value.every(isJsonObject);
}

/** The active branch of message rows (`id`, `parent_id`, `message`) and the session's `active_message_id`. */
function activeBranchOf(rows: readonly SqlRow[], end: unknown): UIMessage[] {
  const tree = messageTreeFromRows(rows, typeof end === 'string' ? end : null);
  return branchTo(tree, tree.activeId);
}

// The bytes a quota counts, the conversation's ($1) and its user's across conversations ($2): running
// totals that triggers keep in the transaction of every write to a message (migration 19), one row
// each — never a sum over the user's history.
const conversationBytesSql = `coalesce((SELECT bytes FROM deskpilot_chat_conversation_bytes WHERE session_id = $1), 0)`;
const userBytesOfSql = (email: string) =>
  `coalesce((SELECT bytes FROM deskpilot_chat_user_bytes WHERE user_email = ${email}), 0)`;
const userBytesSql = userBytesOfSql('$2');

// A write into a conversation first takes a share lock on its row, live (not deleted): a deletion
// (which updates the row, then deletes the messages in a second statement of its transaction) waits
// for the write and then deletes what it stored, or the write waits for the deletion and finds the
// conversation gone. Without the lock, a message committed after the deletion's snapshot would stay.
// These one-statement writes serve a conversation whose newest message ends its active branch (no
// `active_message_id`: nobody branched, or the branch was never switched), where a new message's
// parent is implicit (NULL: the message stored before it). Once branched, writes take `writeOnBranch`.
const liveSql = `SELECT id FROM deskpilot_chat_sessions WHERE id = $1 AND deleted_at IS NULL AND active_message_id IS NULL FOR SHARE`;

/** What a conversation's row says about a write that the one-statement path did not make. */
const branchStateSql = `SELECT deleted_at IS NOT NULL AS deleted, active_message_id IS NOT NULL AS branched
  FROM deskpilot_chat_sessions WHERE id = $1`;

/** The rows of the messages of `$1` with their parents and the session's active end, in position order. */
const treeSql = `SELECT m.id, m.parent_id, m.message, s.active_message_id FROM deskpilot_chat_messages m
  JOIN deskpilot_chat_sessions s ON s.id = m.session_id WHERE m.session_id = $1 ORDER BY m.position`;

// What the conversation list shows of a message, kept beside it (the `preview` column): its text
// parts joined with a line feed, cut to 200 characters, '' when it has none. Computed from the value
// being written, so a list page never reads a whole message (a file can make one megabytes).
const previewSql = (json: string) => `coalesce((SELECT left(string_agg(part->>'text', E'\\n' ORDER BY ordinal), 200)
  FROM jsonb_array_elements(${json}->'parts') WITH ORDINALITY AS parts(part, ordinal) WHERE part->>'type' = 'text'), '')`;

// The insert, else the stored row (in the same snapshot), and only when the caller owns the
// conversation, its messages (as they were before this statement) and the message to add, if any
// ($6, $7), when it fits the quotas ($8 per conversation, $9 per user; null: none): one statement.
// The added message's conversation may be the one created here: the foreign key is checked at the
// end of the statement. The totals come back for the caller to tell which quota refused.
const openSessionSql = `WITH created AS (
    INSERT INTO deskpilot_chat_sessions (${columns}) VALUES ($1, $2, $3, '{}', NULL, $4, $5, 1, NULL, NULL, NULL)
    ON CONFLICT (id) DO NOTHING RETURNING ${columns}
  ), opened AS (
    SELECT ${columns}, true AS created FROM created
    UNION ALL
    SELECT ${columns}, false AS created FROM deskpilot_chat_sessions WHERE id = $1 AND NOT EXISTS (SELECT FROM created)
  ), live AS (
    ${liveSql}
  ), sizes AS (
    SELECT CASE WHEN $8::bigint IS NULL THEN 0 ELSE ${conversationBytesSql} END AS conversation_bytes,
      CASE WHEN $9::bigint IS NULL THEN 0 ELSE ${userBytesSql} END AS user_bytes,
      octet_length($7::jsonb::text) AS message_bytes
  ), added AS (
    INSERT INTO deskpilot_chat_messages (session_id, id, message, bytes, preview)
    SELECT $1, $6, $7::jsonb, sizes.message_bytes, ${previewSql('$7::jsonb')} FROM opened, sizes
    WHERE $6::text IS NOT NULL AND opened.user_email = $2 AND opened.project_key = $3
      AND (opened.created OR EXISTS (SELECT FROM live))
      AND ($8::bigint IS NULL OR sizes.conversation_bytes + sizes.message_bytes <= $8)
      AND ($9::bigint IS NULL OR sizes.user_bytes + sizes.message_bytes <= $9)
    ON CONFLICT (session_id, id) DO NOTHING RETURNING id
  )
  SELECT opened.*, CASE
    WHEN opened.created THEN '[]'::json
    WHEN opened.user_email = $2 AND opened.project_key = $3 THEN
      (SELECT coalesce(json_agg(json_build_object('id', id, 'parent_id', parent_id, 'message', message) ORDER BY position), '[]')
       FROM deskpilot_chat_messages WHERE session_id = $1)
    END AS messages, EXISTS (SELECT FROM added) AS added, sizes.*,
    EXISTS (SELECT FROM deskpilot_chat_messages WHERE session_id = $1 AND id = $6) AS known,
    (SELECT active_message_id FROM deskpilot_chat_sessions WHERE id = $1) AS active_message_id
  FROM opened, sizes`;

// Nothing lands in a deleted conversation: the row lock the update takes orders it after (or before)
// a deletion, whose own statement deletes the messages.
const saveTurnSql = `WITH live AS (
    UPDATE deskpilot_chat_sessions SET last_turn_status = $4, updated_at = $5, version = version + 1,
      title = coalesce(title, $6)
    WHERE id = $1 AND deleted_at IS NULL AND active_message_id IS NULL RETURNING id
  ), saved AS (
    INSERT INTO deskpilot_chat_messages (session_id, id, message, bytes, preview)
    SELECT live.id, $2, $3::jsonb, octet_length($3::jsonb::text), ${previewSql('$3::jsonb')} FROM live
    ON CONFLICT (session_id, id) DO UPDATE SET message = excluded.message, bytes = excluded.bytes, preview = excluded.preview
  )
  SELECT id FROM live`;

// The preview of a conversation's last message; for a row written before migration 7 (no preview),
// computed from the message (CASE reads it only then).
const lastMessageTextSql = `(SELECT nullif(CASE WHEN last.preview IS NOT NULL THEN last.preview ELSE ${previewSql('last.message')} END, '')
  FROM deskpilot_chat_messages last WHERE last.session_id = s.id ORDER BY last.position DESC LIMIT 1)`;

// One statement per case, not one with flags: each matches its partial index, and the cursor is a row
// comparison in the index's order, so a page deep in the list is an index range that stops at the limit
// (no `$3 IS NULL OR …` a generic plan could not use).
const listSql = (
  archived: boolean,
  after: boolean,
) => `SELECT ${chatSessionColumns.map((column) => `s.${column}`).join(', ')}, ${lastMessageTextSql} AS last_message_text
  FROM deskpilot_chat_sessions s
  WHERE s.user_email = $1 AND s.project_key = $2 AND s.archived_at IS ${archived ? 'NOT NULL' : 'NULL'} AND s.deleted_at IS NULL
    ${after ? 'AND (s.updated_at, s.id) < ($4::bigint, $5::text)' : ''}
  ORDER BY s.updated_at DESC, s.id DESC LIMIT $3`;

// A deletion: the tombstone first (its row lock waits for any write holding the conversation's
// share lock), then, in the same transaction but a new statement (a new snapshot), the messages —
// those of a write that committed meanwhile included. Conditions: the purge's, checked again under
// the lock (a conversation brought back meanwhile is not deleted).
async function tombstone(
  client: SqlClient,
  ids: readonly string[],
  deletedAt: number,
  purge?: { before: number },
): Promise<number> {
  return client.transaction(async (transaction) => {
    const { rows } = await transaction.query(
      `UPDATE deskpilot_chat_sessions
       SET deleted_at = $2, working_memory = '{}', title = NULL, active_message_id = NULL, version = version + 1
       WHERE id = ANY($1::text[]) AND deleted_at IS NULL
         AND ($3::bigint IS NULL OR (archived_at IS NOT NULL AND archived_at < $3 AND updated_at < $3))
       RETURNING id`,
      [[...ids], deletedAt, purge?.before ?? null],
    );
    if (rows.length === 0) return 0;
    await transaction.query('DELETE FROM deskpilot_chat_messages WHERE session_id = ANY($1::text[])', [
      rows.map((row) => String(row.id)),
    ]);
    return rows.length;
  });
}

/** Which quota a message of `bytes` does not fit, given the totals stored. */
function exceededQuota(row: SqlRow, quota: StorageQuota | undefined): keyof StorageQuota | undefined {
  if (!quota) return undefined;
  const [conversation, user, bytes] = [row.conversation_bytes, row.user_bytes, row.message_bytes].map(Number) as [
    number,
    number,
    number,
  ];
  if (conversation + bytes > quota.conversationBytes) return 'conversationBytes';
  if (user + bytes > quota.userBytes) return 'userBytes';
  return undefined;
}

async function openSession(
  client: SqlClient,
  init: Parameters<ChatStore['getOrCreateSession']>[0],
  add: UIMessage | undefined,
  quota: StorageQuota | undefined,
  addMessage: ChatStore['addMessage'],
): Promise<OpenSessionResult> {
  // A row another transaction commits after this statement's snapshot is neither inserted nor seen:
  // the second attempt reads it.
  for (let attempt = 0; attempt < 2; attempt++) {
    const { rows } = await client.query(openSessionSql, [
      init.id,
      init.userEmail,
      init.projectKey,
      init.createdAt,
      init.updatedAt,
      add?.id ?? null,
      add ? JSON.stringify(add) : null,
      quota?.conversationBytes ?? null,
      quota?.userBytes ?? null,
    ]);
    const row = rows[0];
    if (!row) continue;
    const session = toSession(row);
    const created = row.created === true;
    const messages =
      row.messages === null
        ? null
        : activeBranchOf(
            readStoredRow('chat session', row).json('messages', isRowList, 'a list of rows'),
            row.active_message_id,
          );
    if (messages === null || add === undefined || session.deletedAt !== null) return { session, created, messages };
    if (row.added === true) return { session, created, messages, added: { added: true } };
    const existing = messages.find((message) => message.id === add.id);
    if (existing) return { session, created, messages, added: { added: false, existing } };
    // Stored on a branch not shown: `addMessage` reads it (its bytes are no reason to refuse).
    if (row.known === true) return { session, created, messages, added: await addMessage(session.id, add, quota) };
    const quotaExceeded = exceededQuota(row, quota);
    if (quotaExceeded) return { session, created, messages, added: { added: false, quotaExceeded } };
    // Not in this statement's snapshot: another request added it just after, and `addMessage` reads it.
    return { session, created, messages, added: await addMessage(session.id, add, quota) };
  }
  throw new DeskpilotError('conflict', {
    detail: 'The conversation was deleted while it was being opened. Try again.',
  });
}

// The message, when its id is new and it fits the quotas ($4 per conversation, $5 for the
// conversation's user; null: none), and the totals the quotas were checked against.
const addMessageSql = `WITH live AS (
    ${liveSql}
  ), sizes AS (
    SELECT CASE WHEN $4::bigint IS NULL THEN 0 ELSE ${conversationBytesSql} END AS conversation_bytes,
      CASE WHEN $5::bigint IS NULL THEN 0 ELSE ${userBytesOfSql('(SELECT user_email FROM deskpilot_chat_sessions WHERE id = $1)')} END AS user_bytes,
      octet_length($3::jsonb::text) AS message_bytes
  ), added AS (
    INSERT INTO deskpilot_chat_messages (session_id, id, message, bytes, preview)
    SELECT $1, $2, $3::jsonb, sizes.message_bytes, ${previewSql('$3::jsonb')} FROM sizes, live
    WHERE ($4::bigint IS NULL OR sizes.conversation_bytes + sizes.message_bytes <= $4)
      AND ($5::bigint IS NULL OR sizes.user_bytes + sizes.message_bytes <= $5)
    ON CONFLICT (session_id, id) DO NOTHING RETURNING id
  )
  SELECT EXISTS (SELECT FROM added) AS added,
    EXISTS (SELECT FROM deskpilot_chat_sessions WHERE id = $1 AND deleted_at IS NOT NULL) AS deleted,
    EXISTS (SELECT FROM deskpilot_chat_sessions WHERE id = $1 AND active_message_id IS NOT NULL) AS branched,
    sizes.* FROM sizes`;

/** Where a write on a branched conversation puts a new message: after a given parent (an edit), else at the active end. */
interface BranchWrite {
  /** Given: the new message starts a branch after it (null: a new first message). */
  parentId?: string | null;
  /** The message the first new one answers: when it is no longer on the active branch, the answer goes right after it. */
  after?: string | undefined;
  quota?: StorageQuota | undefined;
  /** Also set the last turn's status and activity time, and a title when it has none (`saveTurn`). */
  turn?: { lastTurnStatus: string; updatedAt: number; title?: string | undefined };
}

/**
 * Saves `messages` in one transaction that first locks the conversation's row, so concurrent writes
 * queue and each new message follows the one written before it on the active branch. A known id is
 * replaced in place (`addMessage`: left as stored). Null when the conversation is deleted; else, for
 * the first message, what `addMessage` answers.
 */
async function writeOnBranch(
  client: SqlClient,
  sessionId: string,
  messages: readonly UIMessage[],
  write: BranchWrite & { addOnly?: boolean },
): Promise<AddMessageResult | null> {
  return client.transaction(async (transaction) => {
    const { rows } = await transaction.query(
      `SELECT active_message_id, user_email FROM deskpilot_chat_sessions WHERE id = $1 AND deleted_at IS NULL FOR NO KEY UPDATE`,
      [sessionId],
    );
    if (!rows[0]) return null;
    let end = typeof rows[0].active_message_id === 'string' ? rows[0].active_message_id : null;
    let result: AddMessageResult | undefined;
    let after = write.after;
    let shown = true;
    for (const message of messages) {
      const text = JSON.stringify(message);
      const stored = await transaction.query(
        'SELECT message FROM deskpilot_chat_messages WHERE session_id = $1 AND id = $2',
        [sessionId, message.id],
      );
      if (stored.rows[0]) {
        if (write.addOnly) result ??= { added: false, existing: messageFromRow(stored.rows[0]) };
        else
          await transaction.query(
            `UPDATE deskpilot_chat_messages SET message = $3::jsonb, bytes = octet_length($3::jsonb::text),
               preview = ${previewSql('$3::jsonb')} WHERE session_id = $1 AND id = $2`,
            [sessionId, message.id, text],
          );
        after = message.id;
        continue;
      }
      const quotaExceeded = write.quota && (await quotaLeft(transaction, sessionId, text, write.quota));
      if (quotaExceeded) {
        result ??= { added: false, quotaExceeded };
        continue;
      }
      const offBranch =
        write.parentId === undefined &&
        after !== undefined &&
        end !== null &&
        after !== end &&
        (await offActiveBranch(transaction, sessionId, end, after));
      shown &&= !offBranch;
      const parent = offBranch ? after! : write.parentId === undefined ? end : (write.parentId ?? firstMessageParent);
      await transaction.query(
        `INSERT INTO deskpilot_chat_messages (session_id, id, message, bytes, parent_id, preview)
         VALUES ($1, $2, $3::jsonb, octet_length($3::jsonb::text), $4, ${previewSql('$3::jsonb')})`,
        [sessionId, message.id, text, parent],
      );
      // Where the newest message ends the active branch, it still does (the parent stays implicit); an
      // answer placed off the active branch leaves it where it is.
      if (parent !== null && !offBranch) end = message.id;
      after = message.id;
      result ??= { added: true };
    }
    // An answer saved off the branch shown (its question was edited away) is not the conversation's status.
    const turn = shown ? write.turn : undefined;
    await transaction.query(
      `UPDATE deskpilot_chat_sessions SET active_message_id = $2,
         last_turn_status = coalesce($3, last_turn_status), updated_at = coalesce($4, updated_at),
         version = version + CASE WHEN $3::text IS NULL THEN 0 ELSE 1 END, title = coalesce(title, $5)
       WHERE id = $1`,
      [sessionId, end, turn?.lastTurnStatus ?? null, turn?.updatedAt ?? null, turn?.title ?? null],
    );
    return result ?? { added: true };
  });
}

/** Whether message `id` is stored but not on the branch that ends at `end` (an unknown `id` is not: the message goes on). */
async function offActiveBranch(transaction: SqlExecutor, sessionId: string, end: string, id: string) {
  const { rows } = await transaction.query(
    'SELECT id, parent_id FROM deskpilot_chat_messages WHERE session_id = $1 ORDER BY position',
    [sessionId],
  );
  return rows.some((row) => row.id === id) && !isOnActiveBranch(rows, end, id);
}

/** Which quota a new message (`text`) would pass in a conversation, if any. */
async function quotaLeft(
  transaction: SqlExecutor,
  sessionId: string,
  text: string,
  quota: StorageQuota,
): Promise<keyof StorageQuota | undefined> {
  const { rows } = await transaction.query(
    `SELECT ${conversationBytesSql} AS conversation_bytes,
       ${userBytesOfSql('(SELECT user_email FROM deskpilot_chat_sessions WHERE id = $1)')} AS user_bytes,
       octet_length($2::jsonb::text) AS message_bytes`,
    [sessionId, text],
  );
  return exceededQuota(rows[0]!, quota);
}

/** `addMessage`: the message, when its id is new and it fits the quota (one statement), else why not. */
async function addMessageTo(
  client: SqlClient,
  sessionId: string,
  message: UIMessage,
  quota: StorageQuota | undefined,
  parentId?: string | null,
): Promise<AddMessageResult> {
  const onBranch = async () => {
    const result = await writeOnBranch(client, sessionId, [message], { parentId, quota, addOnly: true });
    if (!result) throw new DeskpilotError('conflict', { detail: 'The conversation was deleted.' });
    return result;
  };
  if (parentId !== undefined) return onBranch();
  // Two attempts: the second only matters if the stored message vanished between the two statements.
  for (let attempt = 0; attempt < 2; attempt++) {
    const { rows } = await client.query(addMessageSql, [
      sessionId,
      message.id,
      JSON.stringify(message),
      quota?.conversationBytes ?? null,
      quota?.userBytes ?? null,
    ]);
    if (rows[0]?.added === true) return { added: true };
    if (rows[0]?.deleted === true) throw new DeskpilotError('conflict', { detail: 'The conversation was deleted.' });
    if (rows[0]?.branched === true) return onBranch();
    const stored = await client.query('SELECT message FROM deskpilot_chat_messages WHERE session_id = $1 AND id = $2', [
      sessionId,
      message.id,
    ]);
    if (stored.rows[0])
      return {
        added: false,
        existing: messageFromRow(stored.rows[0]),
      };
    const quotaExceeded = rows[0] && exceededQuota(rows[0], quota);
    if (quotaExceeded) return { added: false, quotaExceeded };
  }
  throw new DeskpilotError('conflict', { detail: 'The message was deleted while it was being added. Try again.' });
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
function conversationMethods(client: SqlClient): ConversationMethods {
  return {
    async listSessions(query) {
      const { after } = query;
      const { rows } = await client.query(listSql(query.archived, after !== undefined), [
        query.userEmail,
        query.projectKey,
        query.limit,
        ...(after ? [after.updatedAt, after.id] : []),
      ]);
      return rows.map((row) => ({
        session: toSession(row),
        lastMessageText: row.last_message_text === null ? null : String(row.last_message_text),
      }));
    },
    async updateConversation(id, change) {
      const { rows } = await client.query(
        `UPDATE deskpilot_chat_sessions
       SET title = CASE WHEN $2::text IS NULL OR ($3 AND title IS NOT NULL) THEN title ELSE $2 END,
         archived_at = CASE WHEN $4 THEN $5::bigint ELSE archived_at END, version = version + 1
       WHERE id = $1 AND deleted_at IS NULL RETURNING ${columns}`,
        [
          id,
          change.title ?? null,
          change.onlyIfUntitled === true,
          change.archivedAt !== undefined,
          change.archivedAt ?? null,
        ],
      );
      return rows[0] ? toSession(rows[0]) : null;
    },
    async deleteSession(id, deletedAt) {
      return (await tombstone(client, [id], deletedAt)) === 1;
    },
    async markRunningTurn(sessionId, turnId) {
      await client.query(
        `INSERT INTO deskpilot_running_turns (session_id, turn_id)
         SELECT id, $2 FROM deskpilot_chat_sessions WHERE id = $1 AND deleted_at IS NULL
         ON CONFLICT (session_id) DO UPDATE SET turn_id = excluded.turn_id`,
        [sessionId, turnId],
      );
    },
    async clearRunningTurn(sessionId, turnId) {
      await client.query('DELETE FROM deskpilot_running_turns WHERE session_id = $1 AND turn_id = $2', [
        sessionId,
        turnId,
      ]);
    },
    async abortRunningTurns(now) {
      const { rows } = await client.query(
        `WITH marked AS (DELETE FROM deskpilot_running_turns RETURNING session_id)
         UPDATE deskpilot_chat_sessions s SET last_turn_status = 'aborted', updated_at = $1, version = s.version + 1
         FROM marked WHERE s.id = marked.session_id AND s.deleted_at IS NULL RETURNING s.id`,
        [now],
      );
      return rows.map((row) => String(row.id));
    },
    async discardEmptySession(id) {
      // The row locked first: a write that holds its share lock (a first message another request adds)
      // commits before, and the check, a statement of its own, sees its message — in one statement the
      // check would read the snapshot from before the wait, and the cascade would take the message.
      return client.transaction(async (transaction) => {
        const { rows } = await transaction.query(
          'SELECT id FROM deskpilot_chat_sessions WHERE id = $1 AND deleted_at IS NULL FOR UPDATE',
          [id],
        );
        if (rows.length === 0) return false;
        const { rowCount } = await transaction.query(
          `DELETE FROM deskpilot_chat_sessions WHERE id = $1
           AND NOT EXISTS (SELECT 1 FROM deskpilot_chat_messages WHERE session_id = $1)`,
          [id],
        );
        return rowCount === 1;
      });
    },
    async purgeArchived({ before, deletedAt, limit }) {
      const { rows: due } = await client.query(
        `SELECT id FROM deskpilot_chat_sessions
       WHERE archived_at IS NOT NULL AND deleted_at IS NULL AND archived_at < $1 AND updated_at < $1 LIMIT $2`,
        [before, limit],
      );
      if (due.length === 0) return 0;
      return tombstone(
        client,
        due.map((row) => String(row.id)),
        deletedAt,
        { before },
      );
    },
  };
}

/** The reads of a conversation's branches, and the switch between them. */
function branchMethods(client: SqlClient): Pick<ChatStore, 'getMessages' | 'getMessageTree' | 'setActiveMessage'> {
  return {
    async getMessages(sessionId) {
      const { rows } = await client.query(treeSql, [sessionId]);
      return activeBranchOf(rows, rows[0]?.active_message_id);
    },
    async getMessageTree(sessionId): Promise<MessageTree> {
      const { rows } = await client.query(treeSql, [sessionId]);
      const end = rows[0]?.active_message_id;
      return messageTreeFromRows(rows, typeof end === 'string' ? end : null);
    },
    async setActiveMessage(sessionId, messageId) {
      const { rowCount } = await client.query(
        `UPDATE deskpilot_chat_sessions SET active_message_id = $2 WHERE id = $1 AND deleted_at IS NULL
         AND EXISTS (SELECT FROM deskpilot_chat_messages WHERE session_id = $1 AND id = $2)`,
        [sessionId, messageId],
      );
      return rowCount > 0;
    },
  };
}

/**
 * Creates a {@link ChatStore} on Postgres or PGlite. Session creation is `INSERT … ON CONFLICT DO
 * NOTHING` (race-safe across replicas), updates carry the version in their `WHERE` clause, and
 * messages are upserted by `(session_id, id)`, keeping the position of their first save. A chat turn
 * takes two statements: `openSession` with the user's message, and `saveTurn` (plus the approval
 * store's read of pending approvals when the conversation shows a card still unanswered).
 *
 * @example
 * const chats = createPostgresChatStore(client);
 */
export function createPostgresChatStore(client: SqlClient): ChatStore {
  const getSession = async (id: string) => {
    const { rows } = await client.query(`SELECT ${columns} FROM deskpilot_chat_sessions WHERE id = $1`, [id]);
    return rows[0] ? toSession(rows[0]) : null;
  };

  const addMessage: ChatStore['addMessage'] = (sessionId, message, quota, parentId) =>
    addMessageTo(client, sessionId, message, quota, parentId);

  /** After a one-statement write that stored nothing: the same write on a branch, unless the conversation is gone. */
  const unlessDeleted = async (sessionId: string, write: () => Promise<unknown>) => {
    const { rows } = await client.query(branchStateSql, [sessionId]);
    if (rows[0]?.branched === true && rows[0].deleted !== true) await write();
  };

  return {
    ...conversationMethods(client),
    ...branchMethods(client),
    async getOrCreateSession(init) {
      // Two attempts: the second only matters if the row was deleted between our insert and select.
      for (let attempt = 0; attempt < 2; attempt++) {
        const { rows } = await client.query(
          `INSERT INTO deskpilot_chat_sessions (${columns}) VALUES ($1, $2, $3, '{}', NULL, $4, $5, 1, NULL, NULL, NULL)
           ON CONFLICT (id) DO NOTHING RETURNING ${columns}`,
          [init.id, init.userEmail, init.projectKey, init.createdAt, init.updatedAt],
        );
        if (rows[0]) return { session: toSession(rows[0]), created: true };
        const existing = await getSession(init.id);
        if (existing) return { session: existing, created: false };
      }
      throw new DeskpilotError('conflict', {
        detail: 'The conversation was deleted while it was being opened. Try again.',
      });
    },
    openSession: (init, add, quota) => openSession(client, init, add, quota, addMessage),
    async saveTurn(sessionId, message, update, after) {
      // One statement, so both writes land or neither does.
      const { rows } = await client.query(saveTurnSql, [
        sessionId,
        message.id,
        JSON.stringify(message),
        update.lastTurnStatus,
        update.updatedAt,
        update.title ?? null,
      ]);
      if (rows.length === 0)
        await unlessDeleted(sessionId, () => writeOnBranch(client, sessionId, [message], { turn: update, after }));
    },
    getSession,
    async storedBytes(owner) {
      const { rows } = await client.query(
        'sessionId' in owner
          ? 'SELECT bytes FROM deskpilot_chat_conversation_bytes WHERE session_id = $1'
          : 'SELECT bytes FROM deskpilot_chat_user_bytes WHERE user_email = $1',
        ['sessionId' in owner ? owner.sessionId : owner.userEmail],
      );
      return Number(rows[0]?.bytes ?? 0);
    },
    async updateSession(id, update) {
      // One statement computes the new notes from the stored ones (removals, then the keys set), so
      // concurrent turns serialise on the row lock and none loses another's notes. The size check
      // counts the notes' JSON as JSON.stringify writes it: Postgres prints jsonb with a space after
      // each ':' and ',', one of each per key but the last comma.
      const change = update.workingMemory;
      const next = `((working_memory - $2::text[]) || $3::jsonb)`;
      const { rows } = await client.query(
        `UPDATE deskpilot_chat_sessions
         SET working_memory = ${next}, last_turn_status = COALESCE($4, last_turn_status), updated_at = $5, version = version + 1
         WHERE id = $1 AND deleted_at IS NULL AND ($6::bigint IS NULL OR
           octet_length(${next}::text) - greatest(2 * (SELECT count(*) FROM jsonb_object_keys(${next})) - 1, 0) <= $6)
         RETURNING ${columns}`,
        [
          id,
          [...(change?.remove ?? [])],
          JSON.stringify(change?.set ?? {}),
          update.lastTurnStatus ?? null,
          update.updatedAt,
          change?.maxBytes ?? null,
        ],
      );
      if (rows[0]) return { ok: true, session: toSession(rows[0]) };
      if (!change) return { ok: false, reason: 'not_found' };
      const stored = await getSession(id);
      return stored && stored.deletedAt === null
        ? { ok: false, reason: 'working_memory_full' }
        : { ok: false, reason: 'not_found' };
    },
    addMessage,
    async upsertMessages(sessionId, messages, after) {
      // One statement cannot update a row twice: de-duplicate first, keeping the first position and
      // the last content of a repeated id (the order a Map gives).
      const batch = new Map<string, UIMessage>();
      for (const message of messages) batch.set(message.id, message);
      if (batch.size === 0) return;
      // Positions come from an identity column, assigned in array order (ORDER BY ordinal).
      const { rows } = await client.query(
        `WITH live AS (${liveSql}), saved AS (
           INSERT INTO deskpilot_chat_messages (session_id, id, message, bytes, preview)
           SELECT $1, item->>'id', item, octet_length(item::text), ${previewSql('item')}
           FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS batch(item, ordinal), live ORDER BY ordinal
           ON CONFLICT (session_id, id) DO UPDATE SET message = excluded.message, bytes = excluded.bytes, preview = excluded.preview
         )
         SELECT id FROM live`,
        [sessionId, JSON.stringify([...batch.values()])],
      );
      if (rows.length === 0)
        await unlessDeleted(sessionId, () => writeOnBranch(client, sessionId, [...batch.values()], { after }));
    },
  };
}
