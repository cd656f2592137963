import { testIdentityLinkStore } from '@deskpilot/core/testing';
import { afterAll, beforeAll, describe } from 'vitest';
import { createPostgresIdentityLinkStore } from './postgres-identity-link-store.js';
import { testBackends, type TestDatabase } from './test-database.test-support.js';

for (const backend of testBackends) {
  describe.skipIf(backend.skip)(`createPostgresIdentityLinkStore ${backend.name}`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await backend.open();
    }, 60_000);
    afterAll(() => database?.close());

    testIdentityLinkStore(async () => {
      await database.reset();
      return createPostgresIdentityLinkStore(database.client);
    });
  });
}
