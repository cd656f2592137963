// @deskpilot/passkeys/testing: a software authenticator that answers real WebAuthn ceremonies in
// tests (no browser), signing with keys of its own.
export {
  createSoftwareAuthenticator,
  type CeremonyOverrides,
  type SoftwareAuthenticator,
} from './software-authenticator.js';
