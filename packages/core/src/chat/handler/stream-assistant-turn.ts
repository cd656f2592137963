import { InvalidToolInputError, NoSuchToolError, convertToModelMessages, toUIMessageStream, type ToolSet } from 'ai';
import type { DeskpilotEventListener } from '../../events/deskpilot-event.js';
import type { HttpResponse } from '../../http/http-request.js';
import type { ChatStore } from '../conversation/chat-store.js';
import { createChatStreamResponse } from '../stream/create-chat-stream-response.js';
import { runToolLoop, type RunToolLoopOptions } from '../tool-loop/run-tool-loop.js';
import { ChatToolError } from '../tools/chat-tool-error.js';
import { activeSpan } from '../../telemetry/spans.js';
import type { ChatMessage } from './chat-message.js';
import type { ChatTurnTools } from './create-chat-tool-set.js';
import type { ChatModel } from './pick-chat-model.js';
import { persistTurn, turnStatusOf } from './persist-turn.js';

/** Options of {@link streamAssistantTurn}. */
export interface StreamAssistantTurnOptions {
  model: ChatModel;
  instructions: string;
  /** The conversation the model answers, the user's turn (or the answered cards) included. */
  history: ChatMessage[];
  /** Id of the assistant message (a retry answers anew in place). */
  assistantId: string;
  turnTools: ChatTurnTools;
  stepBudget?: number | undefined;
  modelCall?: RunToolLoopOptions['modelCall'];
  /** Records an approval request; returns the approval id the client sees. */
  onApprovalRequest: NonNullable<RunToolLoopOptions['onApprovalRequest']>;
  store: ChatStore;
  sessionId: string;
  /** Headers of the response (the rate limit's). */
  headers: Record<string, string>;
  /** Cuts the turn (a drain that ran out of time): its client gets an `error` part, the turn is saved `aborted`. */
  cut: AbortSignal;
  /** Called once the turn is saved, or once saving it failed. */
  onSettled: () => void;
  now: () => number;
  onError: (error: unknown) => void;
  /** Receives `turn-started` and `turn-ended`. @default none */
  emit?: DeskpilotEventListener | undefined;
}

/**
 * Runs the tool loop and streams the assistant's answer; the answer is saved when the stream ends,
 * also when the client went away. `finish` goes out once the turn is saved: a client that sees it
 * can rely on the history.
 */
export async function streamAssistantTurn(options: StreamAssistantTurnOptions): Promise<HttpResponse> {
  const { history, turnTools, cut, onError } = options;
  const loop = runToolLoop({
    model: options.model,
    instructions: options.instructions,
    messages: await convertToModelMessages(history, { tools: turnTools.tools, ignoreIncompleteToolCalls: true }),
    tools: turnTools.tools,
    toolApproval: turnTools.toolApproval,
    stepBudget: options.stepBudget,
    modelCall: options.modelCall,
    abortSignal: cut,
    onApprovalRequest: options.onApprovalRequest,
  });
  const modelLabel = `${options.model.provider}:${options.model.modelId}`;
  // The turn's span (when the host traces): this runs in it, and its ending is known here.
  const turnSpan = activeSpan();
  turnSpan?.setAttribute('deskpilot.model', modelLabel);
  const startedAt = options.now();
  options.emit?.({ type: 'turn-started', model: modelLabel });
  let unsaved = false;
  const stream = toUIMessageStream<ToolSet, ChatMessage>({
    stream: loop.stream,
    originalMessages: history,
    generateMessageId: () => options.assistantId,
    messageMetadata: ({ part }) => (part.type === 'start' ? { model: modelLabel, createdAt: options.now() } : undefined),
    onError: (error) => {
      if (ChatToolError.isInstance(error)) return error.message;
      // The model's own mistake: it sees the error as the call's result and can answer again.
      if (InvalidToolInputError.isInstance(error) || NoSuchToolError.isInstance(error)) return 'The assistant called a tool with invalid input.';
      onError(error);
      return 'The assistant could not answer. Please try again.';
    },
    onEnd: async ({ responseMessage, isAborted, finishReason }) => {
      const status = turnStatusOf({ message: responseMessage, isAborted, finishReason, budgetExhausted: loop.budgetExhausted, failed: loop.failed });
      const saved = await persistTurn({ store: options.store, sessionId: options.sessionId, message: responseMessage, status, now: options.now });
      // An unsaved answer: the client is told (below, before `finish`).
      if (saved.kind === 'unsaved') unsaved = true;
      if (saved.kind !== 'saved') onError(saved.error);
      options.emit?.({ type: 'turn-ended', model: modelLabel, status, durationMs: options.now() - startedAt, saved: saved.kind === 'saved' });
      turnSpan?.setAttributes({ 'deskpilot.turn.status': status, 'deskpilot.turn.saved': saved.kind === 'saved' });
      options.onSettled();
    },
  });
  return createChatStreamResponse({
    stream,
    headers: options.headers,
    signal: cut,
    beforeFinish: () =>
      unsaved
        ? [{ type: 'error', errorText: 'The answer could not be saved. Please send your message again.' }]
        : cut.aborted
          ? [{ type: 'error', errorText: 'The service is restarting: this answer was cut short. Please send your message again.' }]
          : [],
  });
}
