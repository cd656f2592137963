// A chat route of one's own from the design card's blocks (resolveSession, parseChatContext, createSlidingWindowLimiter,
// createApprovalGate, runToolLoop) and the AI SDK's UI stream helpers. The conversation lives in the client (`useChat`
// posts it whole); a write is safe by the gate, which holds each proposal and runs only what was approved, unaltered, once.
import {
  builtinCapabilities,
  builtinChatTools,
  createApprovalGate,
  createMemoryApprovalStore,
  createSlidingWindowLimiter,
  defaultAssistantInstructions,
  DeskpilotError,
  fromFetchRequest,
  parseChatContext,
  problemResponse,
  readJsonBody,
  resolveSession,
  retryAfterSeconds,
  runToolLoop,
  toFetchResponse,
  type ApprovalGate,
  type ApprovalScope,
  type ChatContext,
  type ChatToolDefinition,
  type CommerceBackend,
  type HostChatContext,
  type Session,
  type SessionService,
} from '@deskpilot/core';
import { convertToModelMessages, createUIMessageStreamResponse, getToolName, isToolUIPart, safeValidateUIMessages, tool, toUIMessageStream } from 'ai';
import type { LanguageModel, ToolSet, UIMessage } from 'ai';

/** What the route runs on; `contextOf` is the host's policy: identity and flags of a session. */
export interface ComposedChatOptions {
  sessions: SessionService;
  model: LanguageModel;
  commerce: CommerceBackend;
  contextOf: (session: Session) => HostChatContext;
  stepBudget: number;
  rateLimit: { limit: number; windowMs: number };
}

const definitions: readonly ChatToolDefinition[] = builtinChatTools.filter((definition) => ['getOrder', 'showOrderCard', 'refundOrder'].includes(definition.name));
const capabilityOf = (toolName: string) => definitions.find((definition) => definition.name === toolName)?.capability ?? null;
const isWrite = (capability: string | null) => capability !== null && builtinCapabilities[capability as keyof typeof builtinCapabilities]?.kind === 'write';

/** The tools this user may use; a write runs only through the gate, for a call the gate approved. */
function toolsFor(context: ChatContext, commerce: CommerceBackend, gate: ApprovalGate, approved: ReadonlyMap<string, string>) {
  const tools: ToolSet = {};
  const toolApproval: Record<string, 'user-approval'> = {};
  const toolContext = { userEmail: context.userEmail, projectKey: context.projectKey, businessType: context.businessType, commerce };
  for (const { name, description, inputSchema, capability, execute } of definitions) {
    if (capability !== null && !context.capabilities[capability]) continue;
    if (isWrite(capability)) toolApproval[name] = 'user-approval';
    tools[name] = tool({
      description,
      inputSchema,
      execute: async (input: unknown, { toolCallId }) => {
        if (!isWrite(capability)) return execute(input, toolContext);
        const approvalId = approved.get(toolCallId); // only a call the gate approved in this request
        if (!approvalId) throw new Error('This action needs an approval first.');
        const outcome = await gate.execute(approvalId, (record) => execute(record.input, { ...toolContext, idempotencyKey: approvalId }));
        if (outcome.type === 'error') throw new Error(outcome.message);
        return outcome.output;
      },
    });
  }
  return { tools, toolApproval };
}

/** The user's answers to approval cards, each reviewed by the gate; an answer it refuses becomes a denial. */
async function reviewAnswers(message: UIMessage | undefined, gate: ApprovalGate, scope: ApprovalScope): Promise<Map<string, string>> {
  const approved = new Map<string, string>();
  for (const part of message?.role === 'assistant' ? message.parts : []) {
    if (!isToolUIPart(part) || part.state !== 'approval-responded') continue;
    const { toolCallId, input, approval } = part;
    const review = await gate.review({ ...approval, toolCallId, toolName: getToolName(part), input }, scope, capabilityOf(getToolName(part)));
    if (review.approved) approved.set(toolCallId, approval.id);
    else if (review.record?.state === 'pending') await gate.deny(approval.id, review.reason);
    approval.approved = review.approved;
  }
  return approved;
}

/** `POST /chat` as a fetch handler. */
export function createComposedChat(options: ComposedChatOptions): (request: Request) => Promise<Response> {
  const limiter = createSlidingWindowLimiter(options.rateLimit);
  const gate = createApprovalGate({ store: createMemoryApprovalStore() });
  return async (request) => {
    try {
      const body = (await readJsonBody(fromFetchRequest(request), 1024 * 1024)) as { sessionId?: unknown; messages?: unknown; context?: { pageContext?: unknown } };
      const resolved = await resolveSession(request.headers.get('cookie'), options.sessions.context);
      if (!resolved) throw new DeskpilotError('unauthenticated', { detail: 'Sign in first.' });
      // Identity and flags from the session; of the body, only what the page shows.
      const context = parseChatContext({ ...options.contextOf(resolved.session), pageContext: body.context?.pageContext });
      const decision = await limiter.check(context.userEmail);
      if (!decision.allowed) throw new DeskpilotError('rate_limited', { detail: 'Too many turns.', headers: { 'retry-after': String(retryAfterSeconds(decision)) } });
      const messages = await safeValidateUIMessages({ messages: body.messages });
      if (typeof body.sessionId !== 'string' || !messages.success) throw new DeskpilotError('invalid_request', { detail: 'Expected a sessionId and UI messages.' });
      const scope = { chatSessionId: body.sessionId, userEmail: context.userEmail, projectKey: context.projectKey, capabilities: context.capabilities };
      const { tools, toolApproval } = toolsFor(context, options.commerce, gate, await reviewAnswers(messages.data.at(-1), gate, scope));
      const loop = runToolLoop({
        model: options.model,
        instructions: defaultAssistantInstructions,
        messages: await convertToModelMessages(messages.data, { tools, ignoreIncompleteToolCalls: true }),
        tools,
        toolApproval,
        stepBudget: options.stepBudget,
        abortSignal: request.signal,
        // Each card is recorded before it is streamed; the client answers with the gate's id.
        onApprovalRequest: async (call) => (await gate.propose(scope, { ...call, capability: capabilityOf(call.toolName) ?? '' })).id,
      });
      const stream = toUIMessageStream({ stream: loop.stream, originalMessages: messages.data, generateMessageId: () => crypto.randomUUID() });
      return createUIMessageStreamResponse({ stream });
    } catch (error) {
      if (!DeskpilotError.isInstance(error)) console.error('chat route failed', error); // clients get a safe 500
      return toFetchResponse(problemResponse(error));
    }
  };
}
