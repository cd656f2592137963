import { testIdentityLinkStore } from '../testing/test-identity-link-store.js';
import { createMemoryIdentityLinkStore } from './identity-link-store.js';

testIdentityLinkStore(() => createMemoryIdentityLinkStore());
