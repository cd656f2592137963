import type { ApprovalDecision, ApprovalRecord, ApprovalState, ApprovalStore } from '@deskpilot/core/chat';
import { appendAuditRecord } from './sqlite-audit-store.js';
import {
  approvalColumns,
  approvalFromRow,
  approvalRowValues,
  outcomeJson,
  stepUpRowValues,
} from '@deskpilot/core/storage';
import type { SqliteDatabase } from './open-sqlite-database.js';
import { canBeStored, jsonAsText, type Row } from './read-row.js';

const columns = approvalColumns.join(', ');
const toRecord = (row: Row) => approvalFromRow(row, jsonAsText);

/**
 * Creates an {@link ApprovalStore} on SQLite. `transition` is one
 * `UPDATE … WHERE id = ? AND state = ? RETURNING …`: of concurrent claims, exactly one matches.
 *
 * @example
 * const approvals = createSqliteApprovalStore(database);
 */
export function createSqliteApprovalStore(database: SqliteDatabase): ApprovalStore {
  const sql = (text: string) => database.statement(text);
  const insert = (record: ApprovalRecord) =>
    sql(`INSERT INTO deskpilot_approvals (${columns}) VALUES (${approvalColumns.map(() => '?').join(', ')})`).run(
      ...approvalRowValues(record),
    );
  /** The one `UPDATE … RETURNING` of a transition: of concurrent claims, exactly one matches. */
  const update = (
    id: string,
    from: ApprovalState,
    to: ApprovalState,
    changes: Parameters<ApprovalStore['transition']>[3],
  ): ApprovalRecord | null => {
    // A null parameter means "not given": coalesce keeps the stored outcome or reason.
    const row = sql(
      `UPDATE deskpilot_approvals SET state = ?, outcome = coalesce(?, outcome), reason = coalesce(?, reason),
             decided_by = CASE WHEN ? THEN ? ELSE decided_by END, decided_at = coalesce(?, decided_at),
             decided_session = CASE WHEN ? THEN ? ELSE decided_session END,
             step_up_method = CASE WHEN ? THEN ? ELSE step_up_method END,
             step_up_credential = CASE WHEN ? THEN ? ELSE step_up_credential END,
             step_up_at = CASE WHEN ? THEN ? ELSE step_up_at END,
             step_up_provider = CASE WHEN ? THEN ? ELSE step_up_provider END
           WHERE id = ? AND state = ? RETURNING ${columns}`,
    ).get(
      to,
      changes?.outcome === undefined ? null : outcomeJson(changes.outcome),
      changes?.reason ?? null,
      changes?.decision ? 1 : 0,
      changes?.decision?.by ?? null,
      changes?.decision?.at ?? null,
      changes?.decision ? 1 : 0,
      changes?.decision?.session ?? null,
      ...stepUpChanges(changes?.decision),
      id,
      from,
    );
    return row ? toRecord(row) : null;
  };
  return {
    appendsAudit: true,
    async create(record, audit) {
      if (!audit) database.run(() => insert(record));
      else
        database.transaction(() => {
          insert(record);
          appendAuditRecord(database, audit);
        });
    },
    async get(id) {
      if (!canBeStored(id)) return null;
      const row = database.run(() => sql(`SELECT ${columns} FROM deskpilot_approvals WHERE id = ?`).get(id));
      return row ? toRecord(row) : null;
    },
    async transition(id, from, to, changes, audit) {
      if (!canBeStored(id)) return null;
      if (!audit) return database.run(() => update(id, from, to, changes));
      return database.transaction(() => {
        const record = update(id, from, to, changes);
        if (record) appendAuditRecord(database, audit(record));
        return record;
      });
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
      // Only unanswered ones: an answered approval is the record of its decision (and an executing
      // one is mid-run, its outcome owed to a replay).
      const { changes } = database.run(() =>
        sql(`DELETE FROM deskpilot_approvals WHERE expires_at <= ? AND state = 'pending'`).run(now),
      );
      return Number(changes);
    },
  };
}

/** The step-up columns' parameters of a transition: each "is a decision given" flag, then its value. */
function stepUpChanges(decision: ApprovalDecision | undefined) {
  const flag = decision ? 1 : 0;
  const [method, credential, at, provider] = stepUpRowValues(decision?.stepUp);
  return [flag, method, flag, credential, flag, at, flag, provider];
}
