// @deskpilot/passkeys/testing: a software authenticator that answers real WebAuthn ceremonies in
// tests (no browser), signing with keys of its own; the conformance suite of a passkey store.
export { testPasskeyStore } from './test-passkey-store.js';
export {
  createSoftwareAuthenticator,
  type CeremonyOverrides,
  type SoftwareAuthenticator,
} from './software-authenticator.js';
