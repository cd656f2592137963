import { testInputConformance } from '@deskpilot/core/testing';
import { afterAll, beforeAll, describe } from 'vitest';
import { createPostgresStores } from './create-postgres-stores.js';
import { testBackends, type TestDatabase } from './test-database.test-support.js';

// "Every input the handler accepts, every store stores": generated valid text (astral, U+FFFF,
// controls, RTL marks…) and JSON values within the edge's limits, round-tripped through every store.
for (const backend of testBackends) {
  describe.skipIf(backend.skip)(`input conformance ${backend.name}`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await backend.open();
    }, 60_000);
    afterAll(() => database?.close());

    const stores = async () => {
      await database.reset();
      return createPostgresStores(database.client, { passwordHash: { cost: 1024 } });
    };
    testInputConformance({
      chatStore: async () => (await stores()).chatStore,
      approvalStore: async () => (await stores()).approvalStore,
      sessionStore: async () => (await stores()).sessionStore,
      userDirectory: async () => (await stores()).userDirectory,
    });
  });
}
