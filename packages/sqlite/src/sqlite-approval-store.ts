import type { ApprovalOutcome, ApprovalRecord, ApprovalState, ApprovalStore } from '@deskpilot/core';
import type { SqliteDatabase } from './open-sqlite-database.js';
import { canBeStored, isJsonObject, isRecordOf, readRow, type Row } from './read-row.js';

const states: readonly ApprovalState[] = ['pending', 'executing', 'done', 'denied'];
const columns =
  'id, chat_session_id, user_email, project_key, tool_name, tool_call_id, input, input_hash, capabilities, state, outcome, reason, created_at, expires_at';
const isCapabilities = isRecordOf('boolean');
const isJsonValue = (_value: unknown): _value is unknown => true;

function isOutcome(value: unknown): value is ApprovalOutcome | null {
  if (value === null) return true;
  if (!isJsonObject(value)) return false;
  // `output: undefined` is dropped by JSON: an output outcome may lack the key.
  return value.type === 'output' || (value.type === 'error' && typeof value.message === 'string');
}

function toRecord(row: Row): ApprovalRecord {
  const read = readRow('approval', row);
  return {
    id: read.text('id'),
    chatSessionId: read.text('chat_session_id'),
    userEmail: read.text('user_email'),
    projectKey: read.text('project_key'),
    toolName: read.text('tool_name'),
    toolCallId: read.text('tool_call_id'),
    input: read.json('input', isJsonValue, 'JSON'),
    inputHash: read.text('input_hash'),
    capabilities: read.json('capabilities', isCapabilities, 'an object of booleans'),
    state: read.oneOf('state', states),
    outcome: row.outcome === null ? null : read.json('outcome', isOutcome, 'an approval outcome'),
    reason: read.nullableText('reason'),
    createdAt: read.integer('created_at'),
    expiresAt: read.integer('expires_at'),
  };
}

// `undefined` has no JSON spelling: store it as JSON null rather than failing the NOT NULL column.
const json = (value: unknown) => JSON.stringify(value) ?? 'null';

/**
 * Creates an {@link ApprovalStore} on SQLite. `transition` is one
 * `UPDATE … WHERE id = ? AND state = ? RETURNING …`: of concurrent claims, exactly one matches.
 *
 * @example
 * const approvals = createSqliteApprovalStore(database);
 */
export function createSqliteApprovalStore(database: SqliteDatabase): ApprovalStore {
  const sql = (text: string) => database.statement(text);
  return {
    async create(record) {
      database.run(() =>
        sql(`INSERT INTO deskpilot_approvals (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
          record.id,
          record.chatSessionId,
          record.userEmail,
          record.projectKey,
          record.toolName,
          record.toolCallId,
          json(record.input),
          record.inputHash,
          json(record.capabilities),
          record.state,
          record.outcome == null ? null : json(record.outcome),
          record.reason ?? null,
          record.createdAt,
          record.expiresAt,
        ),
      );
    },
    async get(id) {
      if (!canBeStored(id)) return null;
      const row = database.run(() => sql(`SELECT ${columns} FROM deskpilot_approvals WHERE id = ?`).get(id));
      return row ? toRecord(row) : null;
    },
    async transition(id, from, to, changes) {
      if (!canBeStored(id)) return null;
      // A null parameter means "not given": coalesce keeps the stored outcome or reason.
      const row = database.run(() =>
        sql(
          `UPDATE deskpilot_approvals SET state = ?, outcome = coalesce(?, outcome), reason = coalesce(?, reason)
           WHERE id = ? AND state = ? RETURNING ${columns}`,
        ).get(to, changes?.outcome === undefined ? null : json(changes.outcome), changes?.reason ?? null, id, from),
      );
      return row ? toRecord(row) : null;
    },
    async listPending(chatSessionId) {
      if (!canBeStored(chatSessionId)) return [];
      const rows = database.run(() =>
        sql(
          `SELECT ${columns} FROM deskpilot_approvals WHERE chat_session_id = ? AND state = 'pending' ORDER BY created_at, rowid`,
        ).all(chatSessionId),
      );
      return rows.map(toRecord);
    },
    async deleteExpired(now) {
      // An executing approval is mid-run: deleting it would lose the outcome a replay must receive.
      const { changes } = database.run(() =>
        sql(`DELETE FROM deskpilot_approvals WHERE expires_at <= ? AND state <> 'executing'`).run(now),
      );
      return Number(changes);
    },
  };
}
