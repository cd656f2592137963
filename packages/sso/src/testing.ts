// @deskpilot/sso/testing: the conformance suite of an identity link store.
export { testIdentityLinkStore } from './test-identity-link-store.js';
