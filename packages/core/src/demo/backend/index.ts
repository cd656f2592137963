export type { BackendCall } from './run-idempotent-write.js';
