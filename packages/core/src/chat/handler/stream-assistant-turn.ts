import {
  InvalidToolInputError,
  NoSuchToolError,
  convertToModelMessages,
  getToolName,
  isToolUIPart,
  type UIMessageChunk,
} from 'ai';
import type { ChatEventListener } from '../chat-event.js';
import type { HttpResponse } from '../../http/http-request.js';
import type { ContextBudget } from '../context/bound-model-input.js';
import type { ChatStore, TurnStatus } from '../conversation/chat-store.js';
import { createChatStreamResponse } from '../stream/create-chat-stream-response.js';
import type { StreamRecording } from '../stream/resumable-streams.js';
import { createUIMessageChunker } from '../stream/ui-message-chunker.js';
import { runToolLoop, type RunToolLoopOptions, type RunToolLoopResult } from '../tool-loop/run-tool-loop.js';
import { ChatToolError } from '../tools/chat-tool-error.js';
import { activeSpan, bindToActiveContext } from '../../telemetry/spans.js';
import type { ChatMessage } from './chat-message.js';
import type { ChatTurnTools } from './create-chat-tool-set.js';
import type { ChatModel } from './pick-chat-model.js';
import { addUsage, estimateTokens, turnUsageOf, type TurnUsage } from './token-budget.js';
import { addCost, createCallPricing, type PriceTurn, type TurnCost } from './turn-cost.js';
import { persistTurn, turnStatusOf } from './persist-turn.js';
import { grantSessionEnded } from '../context/grant-sessions.js';

/** Options of {@link streamAssistantTurn}. */
export interface StreamAssistantTurnOptions {
  model: ChatModel;
  instructions: string;
  /** The conversation the model answers, the user's turn (or the answered cards) included. */
  history: ChatMessage[];
  /** Id of the assistant message (a retry answers anew in place). */
  assistantId: string;
  turnTools: ChatTurnTools;
  /** What an approval request carries as its `approval.descriptor`, by tool call id. @default the tool's card */
  approvalDescriptorOf?: (toolCallId: string) => unknown;
  stepBudget?: number | undefined;
  modelCall?: RunToolLoopOptions['modelCall'];
  /** How much of `history` the model is sent. */
  contextBudget: Required<ContextBudget>;
  /**
   * Counts the tokens this request's model calls used (against the user's token budget), estimated
   * when the provider reported none; awaited before `finish`, and called for every turn that ends.
   */
  recordUsage?: ((usage: TurnUsage | undefined, cost: TurnCost | undefined) => Promise<void> | undefined) | undefined;
  /** Prices the turn's usage on its model (the answer's `cost`, the `turn-ended` event's). @default none */
  priceTurn?: PriceTurn | undefined;
  /** The project the turn runs in (what its `turn-ended` event names). */
  projectKey: string;
  /** Told what the turn used, cost and called once it is saved (the usage roll-ups); awaited, never throws. */
  spent?: ((spend: { model: string; usage: TurnUsage; cost?: TurnCost; tools: string[] }) => Promise<void>) | undefined;
  /** Records the answer's bytes for pages that re-attach (`GET /chat/:sessionId/stream`). */
  recording?: StreamRecording | undefined;
  /** Chunks streamed right after `start`, before the model's (already in the stored message `history` ends with). */
  leadingChunks?: readonly UIMessageChunk[] | undefined;
  /** Records an approval request; returns the approval id the client sees. */
  onApprovalRequest: NonNullable<RunToolLoopOptions['onApprovalRequest']>;
  store: ChatStore;
  sessionId: string;
  /** Headers of the response (the rate limit's). */
  headers: Record<string, string>;
  /** Cuts the turn (a drain that ran out of time): its client gets an `error` part, the turn is saved `aborted`. */
  cut: AbortSignal;
  /**
   * Runs once the answer is saved, after the client's `finish` (a title for a new conversation, say);
   * the turn settles when it is done. Must not throw.
   */
  afterSaved?: ((message: ChatMessage) => Promise<void>) | undefined;
  /** A title saved with the answer, for a conversation that has none yet. */
  title?: string | undefined;
  /** Called once the turn is saved (and `afterSaved` is done), or once saving it failed. */
  onSettled: () => void;
  now: () => number;
  onError: (error: unknown) => void;
  /** Receives `turn-started` and `turn-ended`. @default none */
  emit?: ChatEventListener | undefined;
}

/**
 * Runs the tool loop and streams the assistant's answer; the answer is saved when the stream ends,
 * also when the client went away. `finish` goes out once the turn is saved: a client that sees it
 * can rely on the history.
 */
export async function streamAssistantTurn(options: StreamAssistantTurnOptions): Promise<HttpResponse> {
  const { history, turnTools, cut, onError } = options;
  const messages = await convertToModelMessages(history, { tools: turnTools.tools, ignoreIncompleteToolCalls: true });
  const loop = runToolLoop({
    model: options.model,
    instructions: options.instructions,
    messages,
    // Every call of the loop is bounded, each step's own tool results counted.
    contextBudget: options.contextBudget,
    tools: turnTools.tools,
    toolApproval: turnTools.toolApproval,
    stepBudget: options.stepBudget,
    modelCall: options.modelCall,
    abortSignal: cut,
    onApprovalRequest: options.onApprovalRequest,
  });
  const modelLabel = `${options.model.provider}:${options.model.modelId}`;
  const pricing = createCallPricing(
    options.priceTurn,
    { provider: options.model.provider, modelId: options.model.modelId },
    onError,
  );
  // The turn's span (when the host traces): this runs in it, and its ending is known here.
  const turnSpan = activeSpan();
  turnSpan?.setAttributes({ 'deskpilot.model': modelLabel });
  const startedAt = options.now();
  options.emit?.({ type: 'turn-started', model: modelLabel });
  let unsaved = false;
  let usage: TurnUsage | undefined;
  // A continued answer (after an approval) adds its calls' tokens to what the message already used.
  const continuedMessage = history.at(-1)?.id === options.assistantId ? history.at(-1) : undefined;
  const continued = continuedMessage?.metadata?.usage;
  // The loop's parts become UI message chunks, and the answer is assembled from them, in the stage
  // that writes the SSE: what `toUIMessageStream` with `onEnd` does in stream stages of its own.
  const chunker = createUIMessageChunker<ChatMessage>({
    originalMessages: history,
    messageId: options.assistantId,
    messageMetadata: ({ part }) => {
      if (part.type === 'start') return { model: modelLabel, createdAt: options.now() };
      if (part.type !== 'finish') return undefined;
      usage = turnUsageOf(part.totalUsage) ?? estimateUsage(loop);
      const total = addUsage(continued, usage);
      // The whole answer's: what it cost before (a continued one) and this request's, when both are known.
      const requestCost = pricing.total(usage);
      const before = continuedMessage?.metadata?.cost;
      const cost = continuedMessage ? before && requestCost && addCost(before, requestCost) : requestCost;
      return total && { usage: total, ...(cost ? { cost } : {}) };
    },
    onError: (error) => errorTextOf(error, onError),
    approvalDescriptorOf: options.approvalDescriptorOf ?? turnTools.cardOf,
  });
  let streamFailed = false;
  // Run from the response body's `pull`: bound to the turn's trace context, so its store spans are beneath the turn.
  const onEnd = bindToActiveContext(async (streamError?: unknown) => {
    if (streamError !== undefined) {
      streamFailed = true;
      onError(streamError);
    }
    const message = await chunker.message();
    const status = turnStatusOf({
      message,
      isAborted: chunker.isAborted,
      finishReason: chunker.finishReason,
      budgetExhausted: loop.budgetExhausted,
      failed: loop.failed || streamFailed,
    });
    // A turn cut before its `finish` (a client gone, a drain, a failed call) is counted by estimate.
    const used = usage ?? estimateUsage(loop);
    const cost = pricing.total(used);
    await options.recordUsage?.(used, cost);
    const saved = await persistTurn({
      store: options.store,
      sessionId: options.sessionId,
      message,
      status,
      after: history.at(-1)?.id,
      title: options.title,
      onError,
      now: options.now,
    });
    // An unsaved answer: the client is told (below, before `finish`).
    if (saved.kind === 'unsaved') unsaved = true;
    if (saved.kind !== 'saved') onError(saved.error);
    turnSpan?.setAttributes({
      'deskpilot.model_input.chars': loop.calls.reduce((max, call) => Math.max(max, call.chars), 0),
      'deskpilot.model_input.omitted_messages': loop.calls.at(-1)?.omittedMessages ?? 0,
    });
    const ended = { status, saved: saved.kind === 'saved', durationMs: options.now() - startedAt };
    const tools = toolsRun(continuedMessage, message, turnTools.tools);
    await reportTurn(options, { model: modelLabel, cost, used, tools, ...ended });
    turnSpan?.setAttributes({ 'deskpilot.turn.status': status, 'deskpilot.turn.saved': saved.kind === 'saved' });
    // Not awaited: the client's `finish` does not wait for it.
    if (saved.kind === 'saved' && options.afterSaved) void options.afterSaved(message).finally(options.onSettled);
    else options.onSettled();
  });
  return createChatStreamResponse({
    // The loop's parts are read straight off the model's stream: the loop's own checks (approval
    // records, step budget, idle watchdog) and the UI chunks both run in this one stage.
    stream: loop,
    translate: (part, send) => {
      chunker.translate(part, send);
      if (part.type === 'finish-step') pricing.call(turnUsageOf(part.usage));
      if (part.type === 'start') for (const chunk of options.leadingChunks ?? []) send(chunk);
    },
    onEnd,
    headers: options.headers,
    signal: cut,
    recording: options.recording,
    beforeFinish: () =>
      closingErrors({ streamFailed, unsaved, cut: cut.aborted, sessionEnded: cut.reason === grantSessionEnded }),
  });
}

/** What a part of the turn that failed says to the client: a tool's own message, or a safe one (the rest reported). */
function errorTextOf(error: unknown, onError: (error: unknown) => void): string {
  if (ChatToolError.isInstance(error)) return error.message;
  // The model's own mistake: it sees the error as the call's result and can answer again.
  if (InvalidToolInputError.isInstance(error) || NoSuchToolError.isInstance(error)) {
    return 'The assistant called a tool with invalid input.';
  }
  onError(error);
  return 'The assistant could not answer. Please try again.';
}

/**
 * The `error` parts that go out before `finish`: the stream failed, the answer was not saved, or it
 * was cut (by a drain, or because its session ended).
 */
function closingErrors(turn: { streamFailed: boolean; unsaved: boolean; cut: boolean; sessionEnded: boolean }) {
  const cut = turn.sessionEnded
    ? 'Your session has ended: this answer was stopped. Sign in again.'
    : 'The service is restarting: this answer was cut short. Please send your message again.';
  const texts = [
    turn.streamFailed && 'The assistant could not answer. Please try again.',
    turn.unsaved ? 'The answer could not be saved. Please send your message again.' : turn.cut && cut,
  ];
  return texts.filter((text) => text !== false).map((errorText) => ({ type: 'error' as const, errorText }));
}

/**
 * What a turn's calls are counted for when the provider reported no usage: the characters each call
 * was sent (as the context budget counts them) and the characters the model wrote, at
 * `charsPerToken`. Marked `estimated`. Undefined when no call was made.
 */
export function estimateUsage(loop: Pick<RunToolLoopResult, 'calls' | 'outputChars'>): TurnUsage | undefined {
  if (loop.calls.length === 0) return undefined;
  const inputTokens = estimateTokens(loop.calls.reduce((sum, call) => sum + call.chars, 0));
  const outputTokens = estimateTokens(loop.outputChars);
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, estimated: true };
}

/**
 * What a turn used, cost and called, told once it is saved: to the usage roll-ups (awaited), then in
 * its `turn-ended` event.
 */
async function reportTurn(
  options: StreamAssistantTurnOptions,
  turn: {
    model: string;
    cost: TurnCost | undefined;
    used: TurnUsage | undefined;
    tools: string[];
    status: TurnStatus;
    saved: boolean;
    durationMs: number;
  },
): Promise<void> {
  const { cost } = turn;
  if (turn.used)
    await options.spent?.({ model: turn.model, usage: turn.used, ...(cost ? { cost } : {}), tools: turn.tools });
  const { model, status, saved, durationMs } = turn;
  options.emit?.({
    type: 'turn-ended',
    model,
    projectKey: options.projectKey,
    status,
    durationMs,
    saved,
    ...turnSpend(turn.used, cost),
  });
}

/** What a turn used and cost, as its `turn-ended` event carries them (each only when known). */
function turnSpend(usage: TurnUsage | undefined, cost: TurnCost | undefined): { usage?: TurnUsage; cost?: TurnCost } {
  return { ...(usage ? { usage } : {}), ...(cost ? { cost } : {}) };
}

/** The tools this request ran: the answer's tool calls with an output now that had none before it (a continued answer's earlier ones not again). */
function toolsRun(before: ChatMessage | undefined, after: ChatMessage, offered: object): string[] {
  const ran = (message: ChatMessage | undefined) =>
    (message?.parts ?? [])
      .filter(isToolUIPart)
      .filter((part) => part.state === 'output-available' || part.state === 'output-error');
  const ranBefore = new Set(ran(before).map((part) => part.toolCallId));
  // Only the tools the turn offered: a name the model made up ran nothing.
  return ran(after)
    .filter((part) => !ranBefore.has(part.toolCallId))
    .map((part) => getToolName(part))
    .filter((name) => Object.hasOwn(offered, name));
}
