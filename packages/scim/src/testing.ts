// @deskpilot/scim/testing: the conformance suite of the module's store port.
export { testScimStore } from './test-scim-store.js';
