/**
 * Test helpers and conformance suites. Every storage implementation runs the suite of its port:
 *
 * @example
 * import { testSessionStore } from '@deskpilot/core/testing';
 * testSessionStore(() => createPostgresSessionStore({ pool }));
 */
export { createFakeClock, type FakeClock } from './testing/fake-clock.js';
export { checkDeclaredAnswers } from './testing/check-declared-answers.js';
export { cookiePair, createTestSessionService, moduleApi, testUsers } from './testing/create-test-session-service.js';
export { makeSessionRecord, testSessionStore } from './testing/test-session-store.js';
export { testSessionLookup, type SessionLookupFixture } from './testing/test-session-lookup.js';
export { testUserDirectory, type UserDirectoryUnderTest } from './testing/test-user-directory.js';
export { testAccountTokenStore } from './testing/test-account-token-store.js';
export { testAuditStore, type TestAuditStoreOptions } from './testing/test-audit-store.js';
export { testInvitationStore, type InvitationStoreUnderTest } from './testing/test-invitation-store.js';
export { testOrganizationStore } from './testing/test-organization-store.js';
export { testRolePolicyStore } from './testing/test-role-policy-store.js';
export { testTeamDirectory, type TeamDirectoryUnderTest } from './testing/test-team-directory.js';
export { testRateLimiter, type RateLimiterFactory } from './testing/test-rate-limiter.js';
export { testTokenMeter, type TokenMeterFactory } from './testing/test-token-meter.js';
export { testChatStore } from './testing/test-chat-store.js';
export { testApprovalStore } from './testing/test-approval-store.js';
export { testApprovalAudit } from './testing/test-approval-audit.js';
export { testResumableStreams } from './testing/test-resumable-streams.js';
export {
  createInputArbitraries,
  type InputArbitraries,
  type InputArbitrariesOptions,
} from './testing/create-input-arbitraries.js';
export { testInputConformance, type InputConformanceOptions } from './testing/test-input-conformance.js';
