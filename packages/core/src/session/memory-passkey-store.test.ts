import { testPasskeyStore } from '../testing/test-passkey-store.js';
import { createMemoryPasskeyStore } from './passkey-store.js';

testPasskeyStore(() => createMemoryPasskeyStore());
