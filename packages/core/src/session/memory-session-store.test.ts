import { testSessionStore } from '../testing/test-session-store.js';
import { createMemorySessionStore } from './memory-session-store.js';

testSessionStore(() => createMemorySessionStore());
