import { auditHash, chainAuditRecord, verifyAuditChain } from '@deskpilot/core/session';
import { auditColumns, auditFromRow, auditRowValues } from '@deskpilot/core/storage';
import { testAuditStore } from '@deskpilot/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresAuditStore } from './postgres-audit-store.js';
import {
  databaseUrl,
  onPostgres,
  openTestSchema,
  runBuiltCli,
  testBackends,
  type TestDatabase,
} from './test-database.test-support.js';

for (const backend of testBackends) {
  describe.skipIf(backend.skip)(`createPostgresAuditStore ${backend.name}`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await backend.open();
    }, 60_000);
    afterAll(() => database?.close());

    testAuditStore(
      async () => {
        await database.reset();
        return createPostgresAuditStore(database.client);
      },
      {
        insertBehindTheTrail: async (record) =>
          void (await database.client.query(
            `INSERT INTO deskpilot_audit (${auditColumns.join(', ')}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10)`,
            auditRowValues(record),
          )),
      },
    );

    it('names the row an operator edited, or deleted, in the database: the verify finds what the chain no longer proves', async () => {
      await database.reset();
      const store = createPostgresAuditStore(database.client);
      for (let index = 1; index <= 4; index++)
        await store.append({
          projectKey: 'acme-b2c',
          type: 'approval-executed',
          actor: 'alice@example.com',
          session: 'sess-1',
          subject: `apv_${index}`,
          data: { tool: 'refundOrder', orderId: 'ORD-1001', amount: { minor: index * 1_000, currency: 'EUR' } },
          at: index * 1_000,
        });
      expect(await verifyAuditChain(store, 'acme-b2c')).toMatchObject({ ok: true, records: 4 });
      // Someone with the database's password lowers the refunded amount of record 2.
      await database.client.query(
        `UPDATE deskpilot_audit SET data = jsonb_set(data, '{amount,minor}', '1') WHERE project_key = 'acme-b2c' AND seq = 2`,
      );
      expect(await verifyAuditChain(store, 'acme-b2c')).toEqual({
        ok: false,
        projectKey: 'acme-b2c',
        seq: 2,
        problem: 'edited',
      });
      // Or deletes record 3 outright.
      await database.client.query(`DELETE FROM deskpilot_audit WHERE project_key = 'acme-b2c' AND seq IN (2, 3)`);
      expect(await verifyAuditChain(store, 'acme-b2c')).toMatchObject({ ok: false, seq: 2, problem: 'missing' });
    });
  });
}

/** Runs the built `deskpilot-audit` (needs `npm run build`) against this machine's Postgres. */
const runAuditCli = (args: string[]) => runBuiltCli('audit-cli.js', args, { DATABASE_URL: databaseUrl });

describe.skipIf(!databaseUrl)(`deskpilot-audit ${onPostgres}`, () => {
  it('verifies every chain, names the record edited in the database, and exports a project as JSON lines', async () => {
    const database = await openTestSchema();
    try {
      const store = createPostgresAuditStore(database.client);
      for (const projectKey of ['acme-b2c', 'globex-b2c'])
        for (let index = 1; index <= 3; index++)
          await store.append({
            projectKey,
            type: 'sign-in',
            actor: 'alice@example.com',
            session: null,
            subject: null,
            data: { method: 'password' },
            at: index * 1_000,
          });
      const schema = ['--schema', database.schema];
      const sound = await runAuditCli(['verify', ...schema]);
      expect(sound).toMatchObject({ code: 0, stderr: '' });
      const heads = await Promise.all(['acme-b2c', 'globex-b2c'].map((project) => store.head(project)));
      expect(sound.stdout).toBe(
        heads.map((head) => `${head!.projectKey}: 3 records, chain sound, head 3:${head!.hash}\n`).join(''),
      );
      const kept = `3:${heads[1]!.hash}`;
      const expecting = ['verify', '--project', 'globex-b2c', '--expect-head', kept, ...schema];
      expect(await runAuditCli(expecting)).toMatchObject({ code: 0 });
      expect(await runAuditCli(['verify', '--project', 'typo', ...schema])).toMatchObject({
        code: 1,
        stderr: 'typo: no audit records\n',
      });
      expect(await runAuditCli(['verify', '--expect-head', kept, ...schema])).toMatchObject({ code: 2 });
      await database.client.query(
        `UPDATE deskpilot_audit SET actor = 'mallory@example.com' WHERE project_key = 'globex-b2c' AND seq = 3`,
      );
      const broken = await runAuditCli(['verify', ...schema]);
      expect(broken.code).toBe(1);
      expect(broken.stderr).toBe('globex-b2c: record 3 edited\n');
      // Rewritten along with its head, the chain holds again, but not against the head kept before.
      const { rows } = await database.client.query<Record<string, unknown>>(
        `SELECT * FROM deskpilot_audit WHERE project_key = 'globex-b2c' AND seq = 3`,
      );
      const forged = auditHash(auditFromRow(rows[0]!));
      await database.client.query(`UPDATE deskpilot_audit SET hash = $1 WHERE project_key = 'globex-b2c' AND seq = 3`, [
        forged,
      ]);
      await database.client.query(`UPDATE deskpilot_audit_heads SET hash = $1 WHERE project_key = 'globex-b2c'`, [
        forged,
      ]);
      expect(await runAuditCli(['verify', '--project', 'globex-b2c', ...schema])).toMatchObject({ code: 0 });
      expect(await runAuditCli(expecting)).toMatchObject({ code: 1, stderr: 'globex-b2c: record 3 rewritten\n' });
      const exported = await runAuditCli(['export', '--project', 'acme-b2c', ...schema]);
      expect(exported.code).toBe(0);
      const lines = exported.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { seq: number; hash: string });
      expect(lines.map((line) => line.seq)).toEqual([1, 2, 3]);
      // A record inserted past the head, hashed and linked like an append's: named, and never exported.
      const [last] = await store.chain('acme-b2c', 2, 1);
      const pastHead = chainAuditRecord(last!, { ...last!, type: 'member-role-changed', data: { to: 'admin' } });
      await database.client.query(
        `INSERT INTO deskpilot_audit (${auditColumns.join(', ')}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10)`,
        auditRowValues(pastHead),
      );
      expect(await runAuditCli(['verify', '--project', 'acme-b2c', ...schema])).toMatchObject({
        code: 1,
        stderr: 'acme-b2c: record 4 unchained\n',
      });
      const afterForgery = await runAuditCli(['export', '--project', 'acme-b2c', ...schema]);
      expect(afterForgery.stdout).toBe(exported.stdout);
      expect(await runAuditCli(['export', ...schema])).toMatchObject({ code: 2 });
      expect(await runAuditCli(['erase', ...schema])).toMatchObject({ code: 2 });
    } finally {
      await database.close();
    }
  });
});
