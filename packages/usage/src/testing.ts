export { makeUsageEntry, testUsageStore } from './test-usage-store.js';
