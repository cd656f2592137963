import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as chatEntry from './chat.js';
import * as demo from './demo.js';
import * as root from './index.js';
import * as moduleEntry from './module.js';
import * as node from './node.js';
import * as routesEntry from './routes.js';
import * as chatRoutesEntry from './chat-routes.js';
import * as openapi from './openapi.js';
import * as proxyEntry from './proxy.js';
import * as session from './session.js';
import * as storage from './storage.js';
import * as teamEntry from './team.js';
import * as testing from './testing.js';

// The public API, entry by entry. A name added to or removed from an entry fails here first, so the
// API grows by a reviewed decision and internal helpers do not leak out by `export *`.
const rootValues = [
  'DeskpilotError',
  'auditHash',
  'builtinCapabilities',
  'capabilityNamePattern',
  'chainAuditRecord',
  'checkAuditEvent',
  'checkAuditNumber',
  'checkAuditQuery',
  'checkJsonValue',
  'consoleLogger',
  'createApprovalGate',
  'createChatHandler',
  'createConsoleEmailSender',
  'createHashGate',
  'createMemoryAccountTokenStore',
  'createMemoryAuditStore',
  'createMemorySessionStore',
  'createMemoryTokenMeter',
  'meterWindows',
  'createMemoryUserDirectory',
  'createReadinessCheck',
  'createRecoveryModule',
  'createSessionHandler',
  'createSessionLookup',
  'createSessionService',
  'createSlidingWindowLimiter',
  'createStepUpModule',
  'defineCapabilities',
  'describeError',
  'errorStatus',
  'errorTitle',
  'fromFetchRequest',
  'hashPassword',
  'healthResponse',
  'isDeskpilotError',
  'isPasswordHash',
  'isSessionRoute',
  'isValidText',
  'normalizeEmail',
  'parseChatContext',
  'passwordNeedsRehash',
  'problemResponse',
  'pruneAuditTrails',
  'readChatStream',
  'readJsonBody',
  'readinessResponse',
  'requireSession',
  'resolveSession',
  'retryAfterSeconds',
  'runToolLoop',
  'signStepUpProof',
  'stepUpBinding',
  'toFetchResponse',
  'toProblemDetails',
  'toSession',
  'verifyAuditChain',
  'verifyCredentials',
  'verifyPassword',
  'verifyStepUpProof',
];

const rootTypes = [
  'Account',
  'AccountRecovery',
  'AccountRecoveryOptions',
  'AccountTokenPurpose',
  'AccountTokenRecord',
  'AccountTokenStore',
  'Admission',
  'ApprovalGate',
  'ApprovalGateOptions',
  'AuditBreak',
  'AuditEvent',
  'AuditHead',
  'AuditQuery',
  'AuditRecord',
  'AuditStore',
  'AuditVerification',
  'CapabilityKind',
  'CapabilityRegistry',
  'ChatContext',
  'ChatEvent',
  'ChatEventListener',
  'ChatHandler',
  'ChatHandlerOptions',
  'CheckJsonValueOptions',
  'ConsoleEmailSenderOptions',
  'Credentials',
  'DeskpilotErrorOptions',
  'DeskpilotEvent',
  'DeskpilotEventListener',
  'DeviceCookieOptions',
  'EmailMessage',
  'EmailSender',
  'ErrorCode',
  'FieldError',
  'HashGate',
  'HashGateOptions',
  'HashGatePass',
  'HttpRequest',
  'HttpResponse',
  'JsonValue',
  'JsonValueProblem',
  'Logger',
  'LoginInput',
  'LoginResult',
  'Membership',
  'MemorySessionStore',
  'MemoryTokenMeter',
  'MemoryTokenMeterOptions',
  'MemoryUserDirectory',
  'MemoryUserDirectoryOptions',
  'MeterWindowLength',
  'MeterWindows',
  'NewUser',
  'NewUserWithHash',
  'NewUserWithPassword',
  'ParseChatContextOptions',
  'PasswordHashOptions',
  'PasswordResetRequestOutcome',
  'PasswordResetResult',
  'ProblemBudget',
  'ProblemDetails',
  'RandomBytes',
  'RateLimitDecision',
  'RateLimitName',
  'RateLimiter',
  'ReadJsonBodyOptions',
  'ReadinessCheck',
  'ReadinessCheckEntry',
  'ReadinessCheckOptions',
  'ReadinessCheckResult',
  'ReadinessProbe',
  'RecoveryModuleOptions',
  'RequestInfo',
  'RequiredSession',
  'ResolvedSession',
  'RevokeSessionResult',
  'RunToolLoopOptions',
  'RunToolLoopResult',
  'SelectProjectResult',
  'Session',
  'SessionAdmission',
  'SessionAndAccount',
  'SessionContext',
  'SessionCookieOptions',
  'SessionEvent',
  'SessionEventListener',
  'SessionModuleEvents',
  'SessionHandler',
  'SessionHandlerOptions',
  'SessionKernel',
  'SessionLookup',
  'SessionLookupOptions',
  'SessionModule',
  'SessionModuleApis',
  'SessionModuleParts',
  'SessionRecord',
  'SessionService',
  'SessionServiceOptions',
  'SessionSource',
  'SessionStepUp',
  'SessionStore',
  'SessionSummary',
  'SharedEvent',
  'SignInClient',
  'SignInMethod',
  'SignInRequired',
  'SignStepUpProofOptions',
  'SlidingWindowLimiter',
  'SlidingWindowLimiterOptions',
  'StepUpAnswer',
  'StepUpAtProvider',
  'StepUpChallenge',
  'StepUpMethod',
  'StepUpOptions',
  'StepUpProof',
  'StepUpResult',
  'TokenMeter',
  'TokenMeterReading',
  'TokenReservation',
  'User',
  'UserDirectory',
  'VerifyAuditChainOptions',
  'VerifyCredentialsOptions',
  'VerifyEmailResult',
  'VerifyStepUpProofOptions',
];

// The root entry's values that belong to the chat: `@deskpilot/core/session` has every other one.
/** The design card's chat functions: in the root entry, not in `/session`. */
const chatValues = ['createApprovalGate', 'createChatHandler', 'parseChatContext', 'readChatStream', 'runToolLoop'];

/** The type-only names the root entry's source lists (`export type { X }`, or `type X` inside an export block). */
function typeNamesOf(source: string): string[] {
  return [...source.matchAll(/export (type )?\{([^}]*)\}/g)].flatMap(([, typeOnly, names]) =>
    names!
      .split(',')
      .map((name) => name.trim())
      .filter((name) => typeOnly !== undefined || name.startsWith('type '))
      .map((name) => name.replace(/^type /, '')),
  );
}

describe('public API', () => {
  it('root entry: these values', () => {
    expect(Object.keys(root).sort()).toEqual([...rootValues].sort());
  });

  it('root entry: these types, each named, and the backend port types', () => {
    const source = readFileSync(new URL('./index.ts', import.meta.url), 'utf8');
    const sessionSource = readFileSync(new URL('./session.ts', import.meta.url), 'utf8');
    expect([...typeNamesOf(source), ...typeNamesOf(sessionSource)].sort()).toEqual([...rootTypes].sort());
    // Whole modules come in only as the session entry (itself a list of names).
    expect(source.match(/export (type )?\*.*/g)).toEqual(["export * from './session.js';"]);
    // Under ~60 runtime values: the building blocks; each other concern is an entry of its own.
    expect(rootValues.length).toBeLessThanOrEqual(60);
    expect(sessionSource.match(/export (type )?\*.*/g)).toBeNull();
  });

  it("@deskpilot/core/session: the root entry without the design card's chat functions", () => {
    expect(Object.keys(session).sort()).toEqual(rootValues.filter((name) => !chatValues.includes(name)).sort());
  });

  it("@deskpilot/core/chat: the assistant chat, the design card's chat functions among its names", () => {
    expect(Object.keys(chatEntry).sort()).toEqual([
      'ChatToolError',
      'applyWorkingMemoryChange',
      'branchView',
      'builtinChatTools',
      'chatContextHeader',
      'chatExposedHeaders',
      'commerceChatTools',
      'createApprovalGate',
      'createChatHandler',
      'createMemoryApprovalStore',
      'createMemoryChatStore',
      'createMemoryResumableStreams',
      'createStepUpVerifier',
      'defaultAssistantInstructions',
      'defaultBudgetNotice',
      'defineChatTool',
      'isSessionActive',
      'jsonValueSchema',
      'parseChatContext',
      'presentMoney',
      'purgeArchivedConversations',
      'readChatStream',
      'requireIdempotencyKey',
      'resumedStreamError',
      'runToolLoop',
      'safeParseChatContext',
      'sessionCapabilities',
      'signChatGrant',
      'stepUpPolicy',
      'ticketChatTools',
      'titleFromText',
      'uiChatTools',
      'validText',
      'verifyChatGrant',
      'workingMemorySize',
    ]);
  });

  it('@deskpilot/core/team: teams, role policies and organisations', () => {
    expect(Object.keys(teamEntry).sort()).toEqual([
      'applyMembershipChange',
      'capabilitiesOf',
      'createMemoryInvitationStore',
      'createMemoryOrganizationStore',
      'createMemoryRolePolicyStore',
      'createTeamAdmin',
      'createTeamModule',
      'defaultRolePolicy',
      'recordOrganizationChange',
      'rolePolicyProblem',
    ]);
  });

  it("@deskpilot/core/proxy: the studio's proxies", () => {
    expect(Object.keys(proxyEntry).sort()).toEqual([
      'createIdentityForwarder',
      'createSessionRoutesForwarder',
      'defaultDeniedHeaders',
      'downstreamHeaders',
      'endToEndHeaders',
      'fetchCapabilities',
      'fetchSession',
      'forwardRequest',
      'forwardedFor',
      'isIdentityHeader',
    ]);
  });

  it('@deskpilot/core/openapi: the two documents, and the routes the session one lists by default', () => {
    expect(Object.keys(openapi).sort()).toEqual([
      'chatOpenApi',
      'chatRouteDeclarations',
      'sessionOpenApi',
      'sessionRouteDeclarations',
    ]);
  });

  it('@deskpilot/core/module: what a session module is written against', () => {
    expect(Object.keys(moduleEntry).sort()).toEqual([
      'bindRoutes',
      'jsonResponse',
      'noSessionError',
      'passkeysBefore',
      'serveRoute',
      'signInClient',
      'signInRequiredError',
      'throttleAddress',
      'throttleLogin',
      'throttleSignInAddress',
    ]);
  });

  it('@deskpilot/core/routes: the routes as declared, and what a declaration is written with', () => {
    expect(Object.keys(routesEntry).sort()).toEqual([
      'declareRoute',
      'described',
      'isoTime',
      'organizationRoutes',
      'recoveryRoutes',
      'sessionRoutes',
      'sessionSchema',
      'stepUpRoutes',
      'teamRoutes',
    ]);
  });

  it('@deskpilot/core/chat-routes: the chat routes as declared', () => {
    expect(Object.keys(chatRoutesEntry)).toEqual(['chatRoutes']);
  });

  it('@deskpilot/core/node: the Node translation only', () => {
    expect(Object.keys(node).sort()).toEqual(['fromNodeRequest', 'writeResponse']);
  });

  it('@deskpilot/core/testing: the conformance suites and their fixtures', () => {
    expect(Object.keys(testing).sort()).toEqual([
      'checkDeclaredAnswers',
      'cookiePair',
      'createFakeClock',
      'createInputArbitraries',
      'createTestSessionService',
      'makeSessionRecord',
      'moduleApi',
      'testAccountTokenStore',
      'testApprovalAudit',
      'testApprovalStore',
      'testAuditStore',
      'testChatStore',
      'testInputConformance',
      'testInvitationStore',
      'testOrganizationStore',
      'testRateLimiter',
      'testResumableStreams',
      'testRolePolicyStore',
      'testSessionLookup',
      'testSessionStore',
      'testTeamDirectory',
      'testTokenMeter',
      'testUserDirectory',
      'testUsers',
    ]);
  });

  it('@deskpilot/core/storage: checked reads of the rows a SQL store returns', () => {
    expect(Object.keys(storage).sort()).toEqual([
      'accountFromRow',
      'accountTokenColumns',
      'accountTokenFromRow',
      'approvalColumns',
      'approvalFromRow',
      'approvalRowValues',
      'auditColumns',
      'auditFromRow',
      'auditRowValues',
      'auditSeqTaken',
      'branchTo',
      'canBeStored',
      'chatSessionColumns',
      'chatSessionFromRow',
      'checkAccountTokenPurpose',
      'checkModuleSchemas',
      'firstMessageParent',
      'freezeAccount',
      'invitationColumns',
      'invitationFromRow',
      'invitationRowValues',
      'isJsonObject',
      'isJsonValue',
      'isOnActiveBranch',
      'isRecordOf',
      'isStoredMessage',
      'messageFromRow',
      'messagePreview',
      'messageTreeFromRows',
      'outcomeJson',
      'readStoredRow',
      'rolePolicyFromRow',
      'sessionColumns',
      'sessionFromRow',
      'stepUpRowValues',
    ]);
  });

  it('@deskpilot/core/demo: the demo model, backends and users', () => {
    expect(Object.keys(demo).sort()).toEqual([
      'createDemoCommerceBackend',
      'createDemoModel',
      'createDemoTicketBackend',
      'demoModelId',
      'demoModelProvider',
      'demoUsers',
    ]);
  });
});
