import { testAccountTokenStore } from '@deskpilot/core/testing';
import { afterAll, beforeAll, describe } from 'vitest';
import { createPostgresAccountTokenStore } from './postgres-account-token-store.js';
import { testBackends, type TestDatabase } from './test-database.test-support.js';

for (const backend of testBackends) {
  describe.skipIf(backend.skip)(`createPostgresAccountTokenStore ${backend.name}`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await backend.open();
    }, 60_000);
    afterAll(() => database?.close());

    testAccountTokenStore(async () => {
      await database.reset();
      return createPostgresAccountTokenStore(database.client);
    });
  });
}
