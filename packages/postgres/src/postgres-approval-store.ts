import type { ApprovalOutcome, ApprovalRecord, ApprovalState, ApprovalStore } from '@deskpilot/core';
import { isJsonObject, isJsonValue, isRecordOf, readStoredRow } from './read-stored-row.js';
import type { SqlClient, SqlRow } from './sql-client.js';

const states: readonly ApprovalState[] = ['pending', 'executing', 'done', 'denied'];
const columns =
  'id, chat_session_id, user_email, project_key, tool_name, tool_call_id, input, input_hash, capabilities, state, outcome, reason, created_at, expires_at';
const isCapabilities = isRecordOf('boolean');

function isOutcome(value: unknown): value is ApprovalOutcome | null {
  if (value === null) return true;
  if (!isJsonObject(value)) return false;
  // `output: undefined` is dropped by JSON: an output outcome may lack the key.
  return value.type === 'output' || (value.type === 'error' && typeof value.message === 'string');
}

function toRecord(row: SqlRow): ApprovalRecord {
  const read = readStoredRow('approval', row);
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
    outcome: read.json('outcome', isOutcome, 'an approval outcome'),
    reason: read.nullableText('reason'),
    createdAt: read.integer('created_at'),
    expiresAt: read.integer('expires_at'),
  };
}

// `undefined` has no JSON spelling: store it as JSON null rather than failing the NOT NULL column.
const json = (value: unknown) => JSON.stringify(value) ?? 'null';

/**
 * Creates an {@link ApprovalStore} on Postgres or PGlite. `transition` is one
 * `UPDATE … WHERE id = $1 AND state = $2 RETURNING …`: of concurrent claims, exactly one matches.
 *
 * @example
 * const approvals = createPostgresApprovalStore(client);
 */
export function createPostgresApprovalStore(client: SqlClient): ApprovalStore {
  return {
    async create(record) {
      await client.query(
        `INSERT INTO deskpilot_approvals (${columns})
         VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9::jsonb, $10, $11::jsonb, $12, $13, $14)`,
        [
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
        ],
      );
    },
    async get(id) {
      const { rows } = await client.query(`SELECT ${columns} FROM deskpilot_approvals WHERE id = $1`, [id]);
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async transition(id, from, to, changes) {
      // A null parameter means "not given": COALESCE keeps the stored outcome or reason.
      const { rows } = await client.query(
        `UPDATE deskpilot_approvals SET state = $3, outcome = COALESCE($4::jsonb, outcome), reason = COALESCE($5, reason)
         WHERE id = $1 AND state = $2 RETURNING ${columns}`,
        [id, from, to, changes?.outcome === undefined ? null : json(changes.outcome), changes?.reason ?? null],
      );
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async listPending(chatSessionId) {
      const { rows } = await client.query(
        `SELECT ${columns} FROM deskpilot_approvals WHERE chat_session_id = $1 AND state = 'pending' ORDER BY created_at, position`,
        [chatSessionId],
      );
      return rows.map(toRecord);
    },
    async deleteExpired(now) {
      // An executing approval is mid-run: deleting it would lose the outcome a replay must receive.
      const { rowCount } = await client.query(
        `DELETE FROM deskpilot_approvals WHERE expires_at <= $1 AND state <> 'executing'`,
        [now],
      );
      return rowCount;
    },
  };
}
