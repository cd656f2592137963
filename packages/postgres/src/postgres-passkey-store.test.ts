import { testPasskeyStore } from '@deskpilot/core/testing';
import { afterAll, beforeAll, describe } from 'vitest';
import { createPostgresPasskeyStore } from './postgres-passkey-store.js';
import { testBackends, type TestDatabase } from './test-database.test-support.js';

for (const backend of testBackends) {
  describe.skipIf(backend.skip)(`createPostgresPasskeyStore ${backend.name}`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await backend.open();
    }, 60_000);
    afterAll(() => database?.close());

    testPasskeyStore(async () => {
      await database.reset();
      return createPostgresPasskeyStore(database.client);
    });
  });
}
