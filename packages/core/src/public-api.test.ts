import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as demo from './demo.js';
import * as root from './index.js';
import * as node from './node.js';
import * as openapi from './openapi.js';
import * as session from './session.js';
import * as storage from './storage.js';
import * as testing from './testing.js';

// The public API, entry by entry. A name added to or removed from an entry fails here first, so the
// API grows by a reviewed decision and internal helpers do not leak out by `export *`.
const rootValues = [
  'ChatToolError',
  'DeskpilotError',
  'applyWorkingMemoryChange',
  'branchView',
  'builtinCapabilities',
  'builtinChatTools',
  'chatContextHeader',
  'chatExposedHeaders',
  'checkJsonValue',
  'commerceChatTools',
  'consoleLogger',
  'createChatHandler',
  'createHashGate',
  'createIdentityForwarder',
  'createMemoryApprovalStore',
  'createMemoryResumableStreams',
  'createReadinessCheck',
  'createMemoryChatStore',
  'createMemorySessionStore',
  'createMemoryTokenMeter',
  'createMemoryUserDirectory',
  'createSessionHandler',
  'createSessionLookup',
  'createSessionService',
  'createSlidingWindowLimiter',
  'defaultAssistantInstructions',
  'defaultDeniedHeaders',
  'defineCapabilities',
  'defineChatTool',
  'describeError',
  'downstreamHeaders',
  'endToEndHeaders',
  'errorStatus',
  'errorTitle',
  'fetchSession',
  'forwardRequest',
  'forwardedFor',
  'fromFetchRequest',
  'hashPassword',
  'healthResponse',
  'isDeskpilotError',
  'isIdentityHeader',
  'isPasswordHash',
  'isSessionActive',
  'isSessionRoute',
  'isValidText',
  'jsonValueSchema',
  'normalizeEmail',
  'passwordNeedsRehash',
  'resolveSession',
  'presentMoney',
  'purgeArchivedConversations',
  'problemResponse',
  'readinessResponse',
  'readChatStream',
  'readJsonBody',
  'requireIdempotencyKey',
  'retryAfterSeconds',
  'signChatGrant',
  'ticketChatTools',
  'titleFromText',
  'toFetchResponse',
  'toProblemDetails',
  'toSession',
  'uiChatTools',
  'verifyChatGrant',
  'validText',
  'verifyCredentials',
  'verifyPassword',
  'workingMemorySize',
  'createApprovalGate',
  'createSessionRoutesForwarder',
  'defaultBudgetNotice',
  'parseChatContext',
  'requireSession',
  'runToolLoop',
  'safeParseChatContext',
];

const rootTypes = [
  'ReadinessCheck',
  'ReadinessCheckEntry',
  'ReadinessCheckOptions',
  'ReadinessCheckResult',
  'ReadinessProbe',
  'Account',
  'AddMessageResult',
  'BranchView',
  'ApprovalAnswer',
  'ApprovalCard',
  'ApprovalDecision',
  'ApprovalDecisionData',
  'ApprovalDenialReason',
  'ApprovalOutcome',
  'ApprovalRecord',
  'ApprovalScope',
  'ApprovalState',
  'ApprovalStore',
  'BusinessType',
  'CapabilityKind',
  'CapabilityRegistry',
  'ChatContext',
  'ChatContextLimits',
  'ChatCorsOptions',
  'ChatDrainOptions',
  'ChatDrainResult',
  'ChatGrantClaims',
  'ChatGrantPolicy',
  'ChatHandler',
  'ChatHandlerOptions',
  'ChatLimits',
  'ChatModel',
  'ChatModels',
  'ChatSessionInit',
  'ChatSessionRecord',
  'ChatSessionUpdate',
  'ChatSessionUpdateResult',
  'ChatStore',
  'ChatToolContext',
  'ChatToolDefinition',
  'ChatToolKind',
  'CheckJsonValueOptions',
  'ContextBudget',
  'ConversationChange',
  'ConversationJson',
  'ConversationQuery',
  'ConversationRecordJson',
  'ConversationSummary',
  'ConversationTitleOptions',
  'Credentials',
  'DeskpilotErrorOptions',
  'DeskpilotEvent',
  'DeskpilotEventListener',
  'DeviceCookieOptions',
  'ErrorCode',
  'FetchSessionOptions',
  'FieldError',
  'ForwardRequestOptions',
  'ForwardedForOptions',
  'GrantSessionsOptions',
  'HashGate',
  'HashGateOptions',
  'HashGatePass',
  'HostChatContext',
  'HttpRequest',
  'HttpResponse',
  'IdentityForwardTarget',
  'IdentityForwarder',
  'IdentityForwarderOptions',
  'IdentityHeaderOptions',
  'IncomingHeaders',
  'InstructionLimits',
  'JsonValue',
  'JsonValueProblem',
  'JsonValueSchemaOptions',
  'Logger',
  'LoginInput',
  'LoginResult',
  'Membership',
  'ModelCallOptions',
  'MemoryApprovalStore',
  'MemoryChatStore',
  'MessageTree',
  'MemoryResumableStreamsOptions',
  'MemorySessionStore',
  'MemoryTokenMeter',
  'MemoryTokenMeterOptions',
  'MemoryUserDirectory',
  'MemoryUserDirectoryOptions',
  'NewUser',
  'NewUserWithHash',
  'NewUserWithPassword',
  'OpenSessionResult',
  'PasswordHashOptions',
  'PreparedApproval',
  'PresentedMoney',
  'ProblemDetails',
  'PurgeArchivedConversationsOptions',
  'RandomBytes',
  'RateLimitDecision',
  'ResolvedSession',
  'ReadJsonBodyOptions',
  'RateLimiter',
  'RateLimitName',
  'RequestInfo',
  'ResumableStreams',
  'SelectProjectResult',
  'Session',
  'SessionAndAccount',
  'SessionContext',
  'SessionCookieOptions',
  'SessionHandler',
  'SessionHandlerOptions',
  'SessionLookup',
  'SessionLookupOptions',
  'SessionRecord',
  'SessionService',
  'SessionServiceOptions',
  'SessionStore',
  'SignChatGrantOptions',
  'StorageQuota',
  'StreamRecording',
  'SlidingWindowLimiter',
  'SlidingWindowLimiterOptions',
  'TokenBudgetOptions',
  'TokenBudgetPolicy',
  'ChatRateLimit',
  'ChatRateLimitPolicy',
  'TokenMeter',
  'TokenMeterReading',
  'TokenReservation',
  'TreeMessage',
  'TurnStatus',
  'TurnUsage',
  'User',
  'UserDirectory',
  'VerifyChatGrantOptions',
  'VerifyCredentialsOptions',
  'WorkingMemory',
  'WorkingMemoryChange',
  'WorkingMemoryUpdate',
  'ApprovalGate',
  'ApprovalGateOptions',
  'ApprovalReview',
  'ParseChatContextOptions',
  'RequiredSession',
  'RunToolLoopOptions',
  'RunToolLoopResult',
  'SessionRoutesForwardTarget',
  'SessionRoutesForwarder',
  'SessionRoutesForwarderOptions',
  'SessionSource',
];

// The root entry's values that belong to the chat: `@deskpilot/core/session` has every other one.
const chatValues = [
  'chatContextHeader',
  'createMemoryResumableStreams',
  'purgeArchivedConversations',
  'titleFromText',
  'ChatToolError',
  'applyWorkingMemoryChange',
  'branchView',
  'builtinCapabilities',
  'builtinChatTools',
  'chatExposedHeaders',
  'commerceChatTools',
  'createChatHandler',
  'createMemoryApprovalStore',
  'createMemoryChatStore',
  'defaultAssistantInstructions',
  'defineCapabilities',
  'defineChatTool',
  'isSessionActive',
  'presentMoney',
  'readChatStream',
  'requireIdempotencyKey',
  'signChatGrant',
  'ticketChatTools',
  'titleFromText',
  'uiChatTools',
  'verifyChatGrant',
  'workingMemorySize',
  // The input policy's zod schemas: classic zod, which a session-only process never loads.
  'jsonValueSchema',
  'validText',
  'createApprovalGate',
  'defaultBudgetNotice',
  'parseChatContext',
  'runToolLoop',
  'safeParseChatContext',
];

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
    // Whole modules come in only as the session entry (itself a list of names) and the backend ports' types.
    expect(source.match(/export (type )?\*.*/g)).toEqual([
      "export * from './session.js';",
      "export type * from './chat/backends/index.js';",
    ]);
    expect(sessionSource.match(/export (type )?\*.*/g)).toBeNull();
  });

  it('@deskpilot/core/session: the root entry without the chat', () => {
    expect(Object.keys(session).sort()).toEqual(rootValues.filter((name) => !chatValues.includes(name)).sort());
  });

  it('@deskpilot/core/openapi: the two documents', () => {
    expect(Object.keys(openapi).sort()).toEqual(['chatOpenApi', 'sessionOpenApi']);
  });

  it('@deskpilot/core/node: the Node translation only', () => {
    expect(Object.keys(node).sort()).toEqual(['fromNodeRequest', 'writeResponse']);
  });

  it('@deskpilot/core/testing: the conformance suites and their fixtures', () => {
    expect(Object.keys(testing).sort()).toEqual([
      'createFakeClock',
      'createInputArbitraries',
      'makeSessionRecord',
      'testApprovalStore',
      'testChatStore',
      'testInputConformance',
      'testRateLimiter',
      'testResumableStreams',
      'testSessionLookup',
      'testSessionStore',
      'testTokenMeter',
      'testUserDirectory',
    ]);
  });

  it('@deskpilot/core/storage: checked reads of the rows a SQL store returns', () => {
    expect(Object.keys(storage).sort()).toEqual([
      'accountFromRow',
      'approvalColumns',
      'approvalFromRow',
      'approvalRowValues',
      'branchTo',
      'chatSessionColumns',
      'chatSessionFromRow',
      'firstMessageParent',
      'freezeAccount',
      'isJsonObject',
      'isJsonValue',
      'isRecordOf',
      'isStoredMessage',
      'messageFromRow',
      'messagePreview',
      'messageTreeFromRows',
      'outcomeJson',
      'readStoredRow',
      'sessionColumns',
      'sessionFromRow',
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
