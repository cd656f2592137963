import {
  chainAuditRecord,
  checkAuditNumber,
  checkAuditQuery,
  type AuditEvent,
  type AuditRecord,
  type AuditStore,
} from '@deskpilot/core/session';
import { auditColumns, auditFromRow, auditRowValues, auditSeqTaken } from '@deskpilot/core/storage';
import type { SqliteDatabase } from './open-sqlite-database.js';
import { jsonAsText, type Row } from './read-row.js';

const columns = auditColumns.join(', ');
const toRecord = (row: Row) => auditFromRow(row, jsonAsText);

/**
 * Appends `event` at the end of its project's chain; call it inside `database.transaction`: what
 * `append` runs, and what another store runs to record a change in the same transaction as the change.
 */
export function appendAuditRecord(database: SqliteDatabase, event: AuditEvent): AuditRecord {
  const sql = (text: string) => database.statement(text);
  const head = sql('SELECT seq, hash FROM deskpilot_audit_heads WHERE project_key = ?').get(event.projectKey) as
    { seq: number; hash: string } | undefined;
  const record = chainAuditRecord(head ? { seq: Number(head.seq), hash: head.hash } : null, event);
  // A row at that `seq` already was stored past the head, which no append does: nothing is written
  // and the append fails closed.
  const { changes } = sql(
    `INSERT INTO deskpilot_audit (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  ).run(...auditRowValues(record));
  if (Number(changes) !== 1) throw auditSeqTaken(record.projectKey, record.seq);
  sql(
    `INSERT INTO deskpilot_audit_heads (project_key, seq, hash, pruned_through) VALUES (?, ?, ?, 0)
     ON CONFLICT (project_key) DO UPDATE SET seq = excluded.seq, hash = excluded.hash`,
  ).run(record.projectKey, record.seq, record.hash);
  return record;
}

/**
 * Creates an {@link AuditStore} on SQLite. `append` is one write transaction (`BEGIN IMMEDIATE`): the
 * head is read and moved with the record, so appends chain one after the other.
 *
 * @example
 * const audit = createSqliteAuditStore(database);
 */
export function createSqliteAuditStore(database: SqliteDatabase): AuditStore {
  const sql = (text: string) => database.statement(text);
  const headOf = (projectKey: string) =>
    sql('SELECT seq, hash, pruned_through FROM deskpilot_audit_heads WHERE project_key = ?').get(projectKey) as
      { seq: number; hash: string; pruned_through: number } | undefined;
  return {
    async append(event) {
      return database.transaction(() => appendAuditRecord(database, event));
    },

    async list(query) {
      const limit = checkAuditQuery(query);
      const conditions = ['project_key = ?'];
      const values: Array<string | number> = [query.projectKey];
      const where = (condition: string, value: string | number) => (conditions.push(condition), values.push(value));
      if (query.actor !== undefined) where('actor = ?', query.actor);
      if (query.type !== undefined) where('type = ?', query.type);
      if (query.from !== undefined) where('at >= ?', query.from);
      if (query.to !== undefined) where('at < ?', query.to);
      if (query.beforeSeq !== undefined) where('seq < ?', query.beforeSeq);
      const rows = database.run(() =>
        // Up to the head: a row stored past it is no record of the chain.
        sql(
          `SELECT ${columns} FROM deskpilot_audit WHERE ${conditions.join(' AND ')}
           AND seq <= (SELECT seq FROM deskpilot_audit_heads WHERE project_key = ?)
           ORDER BY seq DESC LIMIT ?`,
        ).all(...values, query.projectKey, limit),
      );
      return rows.map(toRecord);
    },

    async chain(projectKey, afterSeq, limit) {
      checkAuditNumber(afterSeq, 'afterSeq');
      checkAuditNumber(limit, 'limit');
      const rows = database.run(() =>
        sql(`SELECT ${columns} FROM deskpilot_audit WHERE project_key = ? AND seq > ? ORDER BY seq LIMIT ?`).all(
          projectKey,
          afterSeq,
          limit,
        ),
      );
      return rows.map(toRecord);
    },

    async projects() {
      const rows = database.run(() => sql('SELECT project_key FROM deskpilot_audit_heads ORDER BY project_key').all());
      return rows.map((row) => String(row.project_key));
    },

    async head(projectKey) {
      const head = database.run(() => headOf(projectKey));
      return head
        ? { projectKey, seq: Number(head.seq), hash: head.hash, prunedThrough: Number(head.pruned_through) }
        : null;
    },

    async prune(projectKey, before) {
      checkAuditNumber(before, 'before');
      return database.transaction(() => {
        const head = headOf(projectKey);
        if (!head) return 0;
        // A prefix of the chain, never its last record: up to the first record at or after `before`.
        const cut = sql(
          'SELECT min(seq) AS keep FROM deskpilot_audit WHERE project_key = ? AND (at >= ? OR seq = ?)',
        ).get(projectKey, before, head.seq) as { keep: number | null };
        const keep = Number(cut.keep ?? head.seq);
        const { changes } = sql('DELETE FROM deskpilot_audit WHERE project_key = ? AND seq < ?').run(projectKey, keep);
        if (Number(changes) > 0)
          sql('UPDATE deskpilot_audit_heads SET pruned_through = ? WHERE project_key = ?').run(keep - 1, projectKey);
        return Number(changes);
      });
    },
  };
}
