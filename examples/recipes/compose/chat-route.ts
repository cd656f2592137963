// A chat route of one's own from the card's blocks (resolveSession, parseChatContext, createSlidingWindowLimiter,
// createApprovalGate, runToolLoop) and the AI SDK's UI stream helpers. The conversation lives in the client (`useChat`
// posts it whole); a write is safe by the gate, which holds each proposal and runs only what was approved, once.
import { builtinCapabilities, createApprovalGate } from '@deskpilot/core';
import { builtinChatTools, createMemoryApprovalStore } from '@deskpilot/core/chat';
import { createSlidingWindowLimiter, DeskpilotError } from '@deskpilot/core';
import { defaultAssistantInstructions } from '@deskpilot/core/chat';
import { fromFetchRequest, parseChatContext, problemResponse, readJsonBody, resolveSession } from '@deskpilot/core';
import { retryAfterSeconds, runToolLoop, toFetchResponse } from '@deskpilot/core';
import type { ApprovalGate, ChatContext } from '@deskpilot/core';
import type { ApprovalScope, ChatToolDefinition, CommerceBackend } from '@deskpilot/core/chat';
import type { RateLimiter, Session, SessionService } from '@deskpilot/core';
import type { HostChatContext } from '@deskpilot/core/chat';
import { convertToModelMessages, createUIMessageStreamResponse, getToolName, isToolUIPart } from 'ai';
import { safeValidateUIMessages, tool, toUIMessageStream, type LanguageModel, type ToolSet, type UIMessage } from 'ai';

/** What the route runs on; `contextOf` is the host's policy: identity and flags of a session. */
export interface ComposedChatOptions {
  sessions: SessionService;
  model: LanguageModel;
  commerce: CommerceBackend;
  contextOf: (session: Session) => HostChatContext | Promise<HostChatContext>;
  stepBudget: number;
  rateLimit: { limit: number; windowMs: number };
}

type ChatBody = { sessionId?: unknown; messages?: unknown; context?: { pageContext?: unknown } };
type Approved = ReadonlyMap<string, string>; // approval ids by tool call id: the calls the gate let run

const offered = ['getOrder', 'showOrderCard', 'refundOrder'];
const definitions: readonly ChatToolDefinition[] = builtinChatTools.filter(({ name }) => offered.includes(name));
const capabilityOf = (toolName: string) => definitions.find(({ name }) => name === toolName)?.capability ?? null;
const isWrite = (capability: string | null) =>
  capability !== null && builtinCapabilities[capability as keyof typeof builtinCapabilities]?.kind === 'write';

/** The tools this user may use; a write runs only through the gate, for a call the gate approved. */
function toolsFor(context: ChatContext, commerce: CommerceBackend, gate: ApprovalGate, approved: Approved) {
  const tools: ToolSet = {};
  const toolApproval: Record<string, 'user-approval'> = {};
  const { userEmail, projectKey, businessType } = context;
  const toolContext = { userEmail, projectKey, businessType, commerce };
  for (const { name, description, inputSchema, capability, execute } of definitions) {
    if (capability !== null && !context.capabilities[capability]) continue;
    if (isWrite(capability)) toolApproval[name] = 'user-approval';
    tools[name] = tool({
      description,
      inputSchema,
      execute: async (input: unknown, { toolCallId }) => {
        if (!isWrite(capability)) return execute(input, toolContext);
        const approvalId = approved.get(toolCallId);
        if (!approvalId) throw new Error('This action needs an approval first.');
        // The stored input runs, never the client's; the approval id is the downstream idempotency key.
        const run = (record: { input: unknown }) =>
          execute(record.input, { ...toolContext, idempotencyKey: approvalId });
        const outcome = await gate.execute(approvalId, run);
        if (outcome.type === 'error') throw new Error(outcome.message);
        return outcome.output;
      },
    });
  }
  return { tools, toolApproval };
}

/** The user's answers to approval cards, each reviewed by the gate; an answer it refuses becomes a denial. */
async function reviewAnswers(message: UIMessage | undefined, gate: ApprovalGate, scope: ApprovalScope) {
  const approved = new Map<string, string>();
  for (const part of message?.role === 'assistant' ? message.parts : []) {
    if (!isToolUIPart(part) || part.state !== 'approval-responded') continue;
    const { toolCallId, input, approval } = part;
    const answer = { ...approval, toolCallId, toolName: getToolName(part), input };
    const review = await gate.review(answer, scope, capabilityOf(answer.toolName));
    if (review.approved) approved.set(toolCallId, approval.id);
    else if (review.record?.state === 'pending') await gate.deny(approval.id, review.reason);
    approval.approved = review.approved;
  }
  return approved;
}

/** One turn: the body, identity, the limit, the answers, then the loop, streamed. */
async function answer(options: ComposedChatOptions, gate: ApprovalGate, limiter: RateLimiter, request: Request) {
  const body = Object(await readJsonBody(fromFetchRequest(request), 1024 * 1024)) as ChatBody; // `null`: no fields
  const messages = await safeValidateUIMessages({ messages: body.messages });
  if (typeof body.sessionId !== 'string' || !messages.success)
    throw new DeskpilotError('invalid_request', { detail: 'Expected a sessionId and UI messages.' });
  const resolved = await resolveSession(request.headers.get('cookie'), options.sessions.context);
  if (!resolved) throw new DeskpilotError('unauthenticated', { detail: 'Sign in first.' });
  // Identity and flags from the session; of the body, only what the page shows.
  const context = parseChatContext({
    ...(await options.contextOf(resolved.session)),
    pageContext: body.context?.pageContext,
  });
  const decision = await limiter.check(context.userEmail);
  if (!decision.allowed) {
    const headers = { 'retry-after': String(retryAfterSeconds(decision)) };
    throw new DeskpilotError('rate_limited', { detail: 'Too many turns.', headers });
  }
  const { userEmail, projectKey, capabilities } = context;
  const scope = { chatSessionId: body.sessionId, userEmail, projectKey, capabilities };
  const approved = await reviewAnswers(messages.data.at(-1), gate, scope);
  const { tools, toolApproval } = toolsFor(context, options.commerce, gate, approved);
  const loop = runToolLoop({
    model: options.model,
    instructions: defaultAssistantInstructions,
    messages: await convertToModelMessages(messages.data, { tools, ignoreIncompleteToolCalls: true }),
    tools,
    toolApproval,
    stepBudget: options.stepBudget,
    abortSignal: request.signal,
    // Each card is recorded before it is streamed; the client answers with the gate's id.
    onApprovalRequest: async (call) =>
      (await gate.propose(scope, { ...call, capability: capabilityOf(call.toolName)! })).id,
  });
  const generateMessageId = () => crypto.randomUUID();
  const stream = toUIMessageStream({ stream: loop.stream, originalMessages: messages.data, generateMessageId });
  return createUIMessageStreamResponse({ stream });
}

/** `POST /chat` as a fetch handler. */
export function createComposedChat(options: ComposedChatOptions): (request: Request) => Promise<Response> {
  const limiter = createSlidingWindowLimiter(options.rateLimit);
  const gate = createApprovalGate({ store: createMemoryApprovalStore() });
  return (request) =>
    answer(options, gate, limiter, request).catch((error: unknown) => {
      if (!DeskpilotError.isInstance(error)) console.error('chat route failed', error); // clients get a safe 500
      return toFetchResponse(problemResponse(error));
    });
}
