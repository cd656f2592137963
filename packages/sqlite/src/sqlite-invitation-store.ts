import type { InvitationRecord, InvitationStore } from '@deskpilot/core/team';
import { invitationColumns, invitationFromRow, invitationRowValues } from '@deskpilot/core/storage';
import type { SqliteDatabase } from './open-sqlite-database.js';
import { canBeStored } from './read-row.js';
import { appendAuditRecord } from './sqlite-audit-store.js';

const columns = invitationColumns.join(', ');

/**
 * Creates an {@link InvitationStore} on SQLite: invitations keyed by their token's digest; `consume` is
 * one `DELETE … RETURNING`, so an invitation is accepted once; an invitation made or revoked and its
 * audit record are one transaction.
 *
 * @example
 * const invitations = createSqliteInvitationStore(database);
 */
export function createSqliteInvitationStore(database: SqliteDatabase): InvitationStore {
  const sql = (text: string) => database.statement(text);
  const one = (text: string, values: string[]): InvitationRecord | null => {
    if (!values.every(canBeStored)) return null;
    const row = database.run(() => sql(text).get(...values));
    return row ? invitationFromRow(row) : null;
  };
  return {
    appendsAudit: true,
    async create(record, audit) {
      database.transaction(() => {
        sql(`INSERT INTO deskpilot_invitations (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
          ...invitationRowValues(record),
        );
        if (audit) appendAuditRecord(database, audit);
      });
    },
    find: async (tokenHash) => one(`SELECT ${columns} FROM deskpilot_invitations WHERE token_hash = ?`, [tokenHash]),
    async list(projectKey, now) {
      if (!canBeStored(projectKey)) return [];
      const rows = database.run(() =>
        sql(
          `SELECT ${columns} FROM deskpilot_invitations WHERE project_key = ? AND expires_at > ? ORDER BY created_at, id`,
        ).all(projectKey, now),
      );
      return rows.map(invitationFromRow);
    },
    consume: async (tokenHash) =>
      one(`DELETE FROM deskpilot_invitations WHERE token_hash = ? RETURNING ${columns}`, [tokenHash]),
    async revoke(projectKey, id, audit) {
      if (!canBeStored(projectKey) || !canBeStored(id)) return null;
      return database.transaction(() => {
        const row = sql(`DELETE FROM deskpilot_invitations WHERE project_key = ? AND id = ? RETURNING ${columns}`).get(
          projectKey,
          id,
        );
        const record = row ? invitationFromRow(row) : null;
        if (record && audit) appendAuditRecord(database, audit(record));
        return record;
      });
    },
    async deleteExpired(now) {
      const { changes } = database.run(() => sql('DELETE FROM deskpilot_invitations WHERE expires_at <= ?').run(now));
      return Number(changes);
    },
  };
}
