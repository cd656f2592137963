// @deskpilot/passkeys: passkeys (WebAuthn, on `@simplewebauthn/server`) as a module of the Deskpilot
// session service. The store port (`PasskeyStore`) and its conformance suite stay in core, beside the
// stores every SQL package implements.
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
