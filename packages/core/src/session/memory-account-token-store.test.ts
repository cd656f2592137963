import { testAccountTokenStore } from '../testing/test-account-token-store.js';
import { createMemoryAccountTokenStore } from './account-token-store.js';

testAccountTokenStore(() => createMemoryAccountTokenStore());
