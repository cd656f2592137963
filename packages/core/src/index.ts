/**
 * `@deskpilot/core`: the building blocks — the design card's functions (the two fetch handlers,
 * `resolveSession`, `parseChatContext`, `createSlidingWindowLimiter`, `createApprovalGate`,
 * `runToolLoop`, `readChatStream`) and what an embedder composes them with: the session service and
 * its ports, errors, HTTP, limits, audit. Each other concern is an entry of its own: `/chat`, `/team`,
 * `/proxy`, `/session`, `/module`, `/routes`, `/chat-routes`, `/node`, `/demo`, `/testing`, `/openapi`,
 * `/storage`.
 * Every name here is listed in `public-api.test.ts`: adding one is a reviewed decision.
 */

// The session service's building blocks (also `@deskpilot/core/session`, which never loads the chat's dependencies).
export * from './session.js';
// The design card's chat functions, with what they take and give (the rest of the chat: `/chat`)
export {
  createApprovalGate,
  createChatHandler,
  parseChatContext,
  readChatStream,
  runToolLoop,
  type ApprovalGate,
  type ApprovalGateOptions,
  type ChatContext,
  type ChatHandler,
  type ChatHandlerOptions,
  type ParseChatContextOptions,
  type RunToolLoopOptions,
  type RunToolLoopResult,
} from './chat.js';
