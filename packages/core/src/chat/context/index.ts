export {
  builtinCapabilities,
  capabilityNamePattern,
  defineCapabilities,
  resolveCapabilities,
  type CapabilityKind,
  type CapabilityRegistry,
} from '../../capabilities/capabilities.js';
export {
  chatContextSchema,
  createChatContextSchema,
  defaultChatContext,
  defaultChatContextLimits,
  type ChatContextLimits,
  parseChatContext,
  safeParseChatContext,
  type ChatContext,
  type ParseChatContextOptions,
} from './parse-chat-context.js';
export {
  signChatGrant,
  verifyChatGrant,
  type ChatGrantClaims,
  type ChatGrantPolicy,
  type ChatGrantUse,
  type VerifiedChatGrant,
  type SignChatGrantOptions,
  type VerifyChatGrantOptions,
} from './chat-grant.js';
export {
  buildInstructions,
  dataBlock,
  defaultAssistantInstructions,
  type InstructionLimits,
} from './build-instructions.js';
export { boundModelInput, inputChars, type BoundedModelInput, type ContextBudget } from './bound-model-input.js';
export {
  isSessionActive,
  sessionCapabilities,
  type GrantSessionsOptions,
  type LiveSession,
  type SessionCapabilitiesOptions,
} from './grant-sessions.js';
