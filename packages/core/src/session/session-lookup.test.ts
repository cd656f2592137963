import { describe } from 'vitest';
import { testSessionLookup } from '../testing/test-session-lookup.js';
import { createMemorySessionStore } from './memory-session-store.js';
import { createMemoryUserDirectory } from './memory-user-directory.js';
import { testPasswordHash } from './session.test-support.js';
import { createSessionLookup } from './session-lookup.js';

describe('createSessionLookup on the memory store and directory', () => {
  testSessionLookup(() => {
    const store = createMemorySessionStore();
    const directory = createMemoryUserDirectory({ passwordHash: testPasswordHash });
    return { lookup: createSessionLookup({ store, directory }), store, directory };
  });
});
