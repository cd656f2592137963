// @deskpilot/sso/testing: the conformance suites of the module's store ports.
export { testIdentityLinkStore } from './test-identity-link-store.js';
export { testSsoConnectionStore } from './connections/test-sso-connection-store.js';
