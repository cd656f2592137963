// @deskpilot/passkeys: passkeys (WebAuthn, on `@simplewebauthn/server`) as a module of the Deskpilot
// session service, with its store port (`PasskeyStore`): in memory here, on Postgres or PGlite in
// `/postgres`, on SQLite in `/sqlite`, each with the module's schema; the conformance suite in `/testing`.
export { createPasskeysModule } from './create-passkeys-module.js';
export type {
  PasskeyOptions,
  PasskeyRegistrationResult,
  PasskeyRemovalResult,
  PasskeySignInResult,
  PasskeySummary,
  Passkeys,
  SessionPasskeys,
} from './passkeys.js';
export { passkeyRoutes } from './passkey-api.js';
export type { PasskeyEvent } from './passkey-event.js';
export { createMemoryPasskeyStore, type PasskeyRecord, type PasskeyStore } from './passkey-store.js';
