import {
  chainAuditRecord,
  checkAuditNumber,
  checkAuditQuery,
  type AuditEvent,
  type AuditQuery,
  type AuditRecord,
  type AuditStore,
} from '@deskpilot/core/session';
import { auditColumns, auditFromRow, auditRowValues, auditSeqTaken } from '@deskpilot/core/storage';
import type { SqlClient, SqlExecutor, SqlRow } from './sql-client.js';

const columns = auditColumns.join(', ');
const toRecord = (row: SqlRow) => auditFromRow(row);

/**
 * Appends `event` at the end of its project's chain inside the caller's transaction (it locks the
 * project's head row until that transaction ends): what `append` runs, and what another store runs to
 * record a change in the same transaction as the change.
 */
export async function appendAuditRecord(transaction: SqlExecutor, event: AuditEvent): Promise<AuditRecord> {
  // One statement creates the head on a project's first record, locks it and reads it: an upsert that
  // updates takes the row lock, and a concurrent one waits, then sees this transaction's head.
  const { rows } = await transaction.query<{ seq: string | number; hash: string }>(
    `INSERT INTO deskpilot_audit_heads (project_key, seq, hash, pruned_through) VALUES ($1, 0, '', 0)
     ON CONFLICT (project_key) DO UPDATE SET seq = deskpilot_audit_heads.seq RETURNING seq, hash`,
    [event.projectKey],
  );
  const head = rows[0]!;
  const record = chainAuditRecord(Number(head.seq) === 0 ? null : { seq: Number(head.seq), hash: head.hash }, event);
  // The record and the head's move in one statement. A row at that `seq` already was stored past the
  // head, which no append does: nothing is written and the append fails closed.
  const { rowCount } = await transaction.query(
    `WITH appended AS (
       INSERT INTO deskpilot_audit (${columns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10)
       ON CONFLICT (project_key, seq) DO NOTHING RETURNING project_key, seq, hash
     )
     UPDATE deskpilot_audit_heads h SET seq = a.seq, hash = a.hash FROM appended a WHERE h.project_key = a.project_key`,
    auditRowValues(record),
  );
  if (rowCount !== 1) throw auditSeqTaken(record.projectKey, record.seq);
  return record;
}

/**
 * Creates an {@link AuditStore} on Postgres or PGlite. `append` runs in one transaction that locks the
 * project's head row (its upsert takes the row lock): concurrent appends, from any replica, chain one after the
 * other. The trail is append-only in the code; grant the application role no `UPDATE` on
 * `deskpilot_audit` to make it so in the database too.
 *
 * @example
 * const audit = createPostgresAuditStore(db.client);
 */
export function createPostgresAuditStore(client: SqlClient): AuditStore {
  return {
    append: (event) => client.transaction((transaction) => appendAuditRecord(transaction, event)),

    async list(query) {
      const limit = checkAuditQuery(query);
      const { where, values } = listConditions(query);
      // Up to the head: a row stored past it is no record of the chain.
      const { rows } = await client.query(
        `SELECT ${columns} FROM deskpilot_audit
         WHERE ${where} AND seq <= (SELECT seq FROM deskpilot_audit_heads WHERE project_key = $1)
         ORDER BY seq DESC LIMIT $${values.length + 1}`,
        [...values, limit],
      );
      return rows.map(toRecord);
    },

    async chain(projectKey, afterSeq, limit) {
      checkAuditNumber(afterSeq, 'afterSeq');
      checkAuditNumber(limit, 'limit');
      const { rows } = await client.query(
        `SELECT ${columns} FROM deskpilot_audit WHERE project_key = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
        [projectKey, afterSeq, limit],
      );
      return rows.map(toRecord);
    },

    async head(projectKey) {
      const { rows } = await client.query<{ seq: string | number; hash: string; pruned_through: string | number }>(
        'SELECT seq, hash, pruned_through FROM deskpilot_audit_heads WHERE project_key = $1 AND seq > 0',
        [projectKey],
      );
      const head = rows[0];
      return head
        ? { projectKey, seq: Number(head.seq), hash: head.hash, prunedThrough: Number(head.pruned_through) }
        : null;
    },

    async projects() {
      const { rows } = await client.query<{ project_key: string }>(
        'SELECT project_key FROM deskpilot_audit_heads WHERE seq > 0 ORDER BY project_key COLLATE "C"',
      );
      return rows.map((row) => row.project_key);
    },

    async prune(projectKey, before) {
      checkAuditNumber(before, 'before');
      return client.transaction(async (transaction) => {
        // A prefix of the chain, never its last record: up to the first record at or after `before`.
        const { rows } = await transaction.query<{ seq: string | number }>(
          `SELECT h.seq FROM deskpilot_audit_heads h WHERE h.project_key = $1 FOR UPDATE`,
          [projectKey],
        );
        if (!rows[0]) return 0;
        const { rows: cut } = await transaction.query<{ keep: string | number | null }>(
          `SELECT min(seq) AS keep FROM deskpilot_audit WHERE project_key = $1 AND (at >= $2 OR seq = $3)`,
          [projectKey, before, rows[0].seq],
        );
        const keep = Number(cut[0]?.keep ?? rows[0].seq);
        const { rowCount } = await transaction.query(
          'DELETE FROM deskpilot_audit WHERE project_key = $1 AND seq < $2',
          [projectKey, keep],
        );
        if (rowCount > 0)
          await transaction.query('UPDATE deskpilot_audit_heads SET pruned_through = $2 WHERE project_key = $1', [
            projectKey,
            keep - 1,
          ]);
        return rowCount;
      });
    },
  };
}

/** The `WHERE` of a query, with its numbered parameters. */
function listConditions(query: AuditQuery): { where: string; values: unknown[] } {
  const conditions = ['project_key = $1'];
  const values: unknown[] = [query.projectKey];
  const add = (column: string, operator: string, value: unknown) => {
    if (value === undefined) return;
    values.push(value);
    conditions.push(`${column} ${operator} $${values.length}`);
  };
  add('actor', '=', query.actor);
  add('type', '=', query.type);
  add('at', '>=', query.from);
  add('at', '<', query.to);
  add('seq', '<', query.beforeSeq);
  return { where: conditions.join(' AND '), values };
}
