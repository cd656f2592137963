import {
  chainAuditRecord,
  createSessionHandler,
  createSessionService,
  type DeskpilotEvent,
  type Logger,
} from '@deskpilot/core';
import { createTeamModule } from '@deskpilot/core/team';
import { demoUsers } from '@deskpilot/core/demo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeBackends, type StoreDatabase } from './test-database.test-support.js';

// Someone with the database's password stores a record past the trail's head (a forged "newest event").
// Through the session service's routes, on every SQL store: the verification names it, the list and
// the export never serve it, and a sign-in that would append after it is a 503 problem that changes
// nothing, logged and counted — never a 500, never a session the trail does not record.

const studio = 'http://studio.test';
const [alice] = demoUsers;

for (const backend of storeBackends)
  describe.skipIf(backend.skip)(`a record stored past the audit trail's head ${backend.name}`, () => {
    let database: StoreDatabase;
    beforeAll(async () => {
      database = await backend.open();
    }, 60_000);
    afterAll(() => database?.close());

    it('is named by the verification, served by no list or export, and fails the next sign-in closed', async () => {
      await database.reset();
      const stores = database.stores({ passwordHash: { cost: 16 } });
      for (const user of demoUsers) await stores.userDirectory.addUser(user);
      const events: DeskpilotEvent[] = [];
      const errors: unknown[] = [];
      const logger: Logger = { ...console, error: (_message: string, error?: unknown) => void errors.push(error) };
      const service = createSessionService({
        store: stores.sessionStore,
        directory: stores.userDirectory,
        passwordHash: { cost: 16 },
        audit: stores.auditStore,
        modules: [
          createTeamModule({
            directory: stores.userDirectory,
            invitations: stores.invitationStore,
            policies: stores.rolePolicyStore,
          }),
        ],
      });
      const handler = createSessionHandler({
        service,
        allowedOrigins: [studio],
        logger,
        onEvent: (event) => void events.push(event),
      });
      const send = (method: string, path: string, body?: unknown, cookie?: string) =>
        handler.fetch(
          new Request(`http://sessions.test${path}`, {
            method,
            headers: {
              origin: studio,
              ...(body === undefined ? {} : { 'content-type': 'application/json' }),
              ...(cookie ? { cookie } : {}),
            },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          }),
          { clientAddress: '192.0.2.1' },
        );
      const signIn = () => send('POST', '/sessions', { email: alice!.email, password: alice!.password });

      const first = await signIn();
      expect(first.status).toBe(201);
      const cookie = first.headers.get('set-cookie')!.split(';')[0]!;
      const head = (await stores.auditStore.head('acme-b2c'))!;
      const forged = chainAuditRecord(head, {
        projectKey: 'acme-b2c',
        type: 'member-role-changed',
        actor: alice!.email,
        session: null,
        subject: 'mallory',
        data: { from: ['agent'], to: 'admin' },
        at: Date.now(),
      });
      await database.insertAuditRow(forged);

      const verified = await send('GET', '/sessions/team/audit/verify?projectKey=acme-b2c', undefined, cookie);
      expect(await verified.json()).toEqual({
        ok: false,
        projectKey: 'acme-b2c',
        seq: forged.seq,
        problem: 'unchained',
      });
      const listed = (await (
        await send('GET', '/sessions/team/audit?projectKey=acme-b2c', undefined, cookie)
      ).json()) as { records: Array<{ seq: number; type: string }> };
      expect(listed.records.map((record) => record.seq)).toEqual([head.seq]);
      const exported = await (
        await send('GET', '/sessions/team/audit/export?projectKey=acme-b2c', undefined, cookie)
      ).text();
      expect(
        exported
          .trim()
          .split('\n')
          .map((line) => (JSON.parse(line) as { seq: number }).seq),
      ).toEqual([head.seq]);

      const sessionsBefore = await database.count('deskpilot_sessions');
      const refused = await signIn();
      expect(refused.status).toBe(503);
      expect(refused.headers.get('content-type')).toBe('application/problem+json');
      expect(refused.headers.get('set-cookie')).toBeNull();
      expect(await refused.json()).toMatchObject({ code: 'audit_unavailable', status: 503 });
      expect(await database.count('deskpilot_sessions')).toBe(sessionsBefore);
      expect(await stores.auditStore.head('acme-b2c')).toEqual(head);
      expect(events).toContainEqual({ type: 'audit-error' });
      expect(String((errors.at(-1) as Error).cause)).toMatch(/record 2 exists past the head/);
      // The forged row was left as it was, for the operator to look at.
      expect(await stores.auditStore.chain('acme-b2c', head.seq, 10)).toEqual([forged]);
    });
  });
