import type { ApprovalRecord, ApprovalState, ApprovalStore } from '@deskpilot/core/chat';
import { appendAuditRecord } from './postgres-audit-store.js';
import {
  approvalColumns,
  approvalFromRow,
  approvalRowValues,
  outcomeJson,
  stepUpRowValues,
} from '@deskpilot/core/storage';
import type { SqlClient, SqlExecutor, SqlRow } from './sql-client.js';

const columns = approvalColumns.join(', ');
const toRecord = (row: SqlRow) => approvalFromRow(row);

/**
 * Creates an {@link ApprovalStore} on Postgres or PGlite. `transition` is one
 * `UPDATE … WHERE id = $1 AND state = $2 RETURNING …`: of concurrent claims, exactly one matches.
 *
 * @example
 * const approvals = createPostgresApprovalStore(client);
 */
export function createPostgresApprovalStore(client: SqlClient): ApprovalStore {
  const insert = (executor: SqlExecutor, record: ApprovalRecord) =>
    executor.query(
      `INSERT INTO deskpilot_approvals (${columns})
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9::jsonb, $10, $11::jsonb, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21::jsonb)`,
      approvalRowValues(record),
    );
  return {
    appendsAudit: true,
    async create(record, audit) {
      if (!audit) await insert(client, record);
      else
        await client.transaction(async (transaction) => {
          await insert(transaction, record);
          await appendAuditRecord(transaction, audit);
        });
    },
    async get(id) {
      const { rows } = await client.query(`SELECT ${columns} FROM deskpilot_approvals WHERE id = $1`, [id]);
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async transition(id, from, to, changes, audit) {
      if (!audit) return update(client, id, from, to, changes);
      return client.transaction(async (transaction) => {
        const record = await update(transaction, id, from, to, changes);
        if (record) await appendAuditRecord(transaction, audit(record));
        return record;
      });
    },
    async listPending(chatSessionId) {
      const { rows } = await client.query(
        `SELECT ${columns} FROM deskpilot_approvals WHERE chat_session_id = $1 AND state = 'pending' ORDER BY created_at, position`,
        [chatSessionId],
      );
      return rows.map(toRecord);
    },
    async deleteExpired(now) {
      // Only unanswered ones: an answered approval is the record of its decision (and an executing
      // one is mid-run, its outcome owed to a replay).
      const { rowCount } = await client.query(
        `DELETE FROM deskpilot_approvals WHERE expires_at <= $1 AND state = 'pending'`,
        [now],
      );
      return rowCount;
    },
  };
}

/** The one `UPDATE … RETURNING` of a transition: of concurrent claims, exactly one matches. */
async function update(
  executor: SqlExecutor,
  id: string,
  from: ApprovalState,
  to: ApprovalState,
  changes: Parameters<ApprovalStore['transition']>[3],
): Promise<ApprovalRecord | null> {
  // A null parameter means "not given": COALESCE keeps the stored outcome or reason.
  const { rows } = await executor.query(
    `UPDATE deskpilot_approvals SET state = $3, outcome = COALESCE($4::jsonb, outcome), reason = COALESCE($5, reason),
           decided_by = CASE WHEN $6 THEN $7 ELSE decided_by END, decided_at = COALESCE($8, decided_at),
           decided_session = CASE WHEN $6 THEN $9 ELSE decided_session END,
           step_up_method = CASE WHEN $6 THEN $10 ELSE step_up_method END,
           step_up_credential = CASE WHEN $6 THEN $11 ELSE step_up_credential END,
           step_up_at = CASE WHEN $6 THEN $12::bigint ELSE step_up_at END,
           step_up_provider = CASE WHEN $6 THEN $13::jsonb ELSE step_up_provider END
         WHERE id = $1 AND state = $2 RETURNING ${columns}`,
    [
      id,
      from,
      to,
      changes?.outcome === undefined ? null : outcomeJson(changes.outcome),
      changes?.reason ?? null,
      changes?.decision !== undefined,
      changes?.decision?.by ?? null,
      changes?.decision?.at ?? null,
      changes?.decision?.session ?? null,
      ...stepUpRowValues(changes?.decision?.stepUp),
    ],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}
