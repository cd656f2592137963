import {
  testInvitationStore,
  testOrganizationStore,
  testRolePolicyStore,
  testTeamDirectory,
} from '@deskpilot/core/testing';
import { createPostgresOrganizationStore } from './postgres-organization-store.js';
import { createPostgresRolePolicyStore } from './postgres-role-policy-store.js';
import { afterAll, beforeAll, describe } from 'vitest';
import { createPostgresAuditStore } from './postgres-audit-store.js';
import { createPostgresInvitationStore } from './postgres-invitation-store.js';
import { createPostgresUserDirectory } from './postgres-user-directory.js';
import { testBackends, type TestDatabase } from './test-database.test-support.js';

for (const backend of testBackends) {
  describe.skipIf(backend.skip)(`team stores ${backend.name}`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await backend.open();
    }, 60_000);
    afterAll(() => database?.close());

    testInvitationStore(async () => {
      await database.reset();
      return {
        store: createPostgresInvitationStore(database.client),
        audit: createPostgresAuditStore(database.client),
      };
    });
    testOrganizationStore(async () => {
      await database.reset();
      return createPostgresOrganizationStore(database.client);
    });
    testRolePolicyStore(async () => {
      await database.reset();
      return {
        store: createPostgresRolePolicyStore(database.client),
        audit: createPostgresAuditStore(database.client),
      };
    });
    for (const cache of [false, true])
      describe(cache ? 'with the read cache' : 'uncached', () => {
        testTeamDirectory(async () => {
          await database.reset();
          return {
            directory: createPostgresUserDirectory(database.client, { cache }),
            audit: createPostgresAuditStore(database.client),
          };
        });
      });
  });
}
