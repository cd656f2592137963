import { createUIMessageStream, getToolName, isToolUIPart, safeValidateUIMessages, type UIMessageChunk } from 'ai';
import type { z } from 'zod';
import { DeskpilotError } from '../../errors/deskpilot-error.js';
import type { ChatEventListener } from '../chat-event.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../../http/http-request.js';
import { parseWithSchema } from '../../validation/parse-with-schema.js';
import type { ApprovalStore } from '../approval/approval-store.js';
import type { ApprovalGate, ApprovalScope } from '../approval/create-approval-gate.js';
import type { ApprovalStepUp } from '../approval/approval-store.js';
import { asksStepUp, type ChatStepUpOptions, type StepUpRequest } from '../approval/step-up.js';
import { stepUpBinding } from '../../step-up/step-up-proof.js';
import type { ContextBudget } from '../context/bound-model-input.js';
import { buildInstructions } from '../context/build-instructions.js';
import type { ChatSessionRecord, ChatStore, StorageQuota } from '../conversation/chat-store.js';
import { createChatStreamResponse } from '../stream/create-chat-stream-response.js';
import type { ResumableStreams, StreamRecording } from '../stream/resumable-streams.js';
import { answerApprovals } from './answer-approvals.js';
import { historyJson } from './history-json.js';
import { ownConversation } from './own-conversation.js';
import { denyAwaitingApprovals, isAwaitingApproval, isUnsettledApproval, type ChatMessage } from './chat-message.js';
import { assistantMessageSchema, chatBodySchema, userMessageSchema } from './chat-request.js';
import type { RouteRequestInput } from '../../routes/route-table.js';
import type { chatRoutes } from './chat-api.js';

/** The body of `POST /chat` as the handler reads it (every message bounded; only the last parsed in full). */
export type ChatBody = z.output<ReturnType<typeof chatBodySchema>>;
import type { ChatAdmission } from './create-chat-admission.js';
import type { ChatToolSet } from './create-chat-tool-set.js';
import type { ChatToolSource } from '../tools/chat-tool-source.js';
import type { RunningTurn } from './create-turn-tracker.js';
import { discardRefusedConversation, openConversation, type OpenConversationResult } from './open-conversation.js';
import { pickChatModel, type ChatModel, type ChatModels } from './pick-chat-model.js';
import type { ResolveChatContextResult } from './resolve-chat-context.js';
import type { GrantSessionWatch } from '../context/grant-sessions.js';
import type { ChatGrantUse } from '../context/chat-grant.js';
import type { ChatContext } from '../context/parse-chat-context.js';
import { branchRequestOf, startBranch, type BranchRequest, type UserIntent } from './start-branch.js';
import { startUserTurn, storedUserMessage } from './start-user-turn.js';
import type { ModelCallOptions } from '../tool-loop/run-tool-loop.js';
import { sourcedTools } from './sourced-tools.js';
import { streamAssistantTurn } from './stream-assistant-turn.js';
import { textOf, titleConversation, titleFromText, type ConversationTitleOptions } from './title-conversation.js';
import type { TokenBudget } from './token-budget.js';
import type { TurnBudget } from './turn-budget.js';
import { reserveSpend, type SpendHold } from './reserve-spend.js';
import type { PriceTurn } from './turn-cost.js';
import { recordBounded, type UsageEntry, type UsageRecorder } from './usage-recorder.js';

/** What the chat routes run on: the handler's options, normalised once when it is created. */
export interface ChatRouteDependencies {
  store: ChatStore;
  approvalStore: ApprovalStore;
  models: ChatModels;
  gate: ApprovalGate;
  admission: ChatAdmission;
  /** The history reads' own limit. */
  historyAdmission: ChatAdmission;
  /** The limit of callers outside a conversation (`handler.tools`). */
  toolsAdmission: ChatAdmission;
  toolSet: ChatToolSet;
  /** Where more tools come from per project (MCP servers), asked once per turn. */
  toolSources: readonly ChatToolSource[];
  /** Identity and flags; `answersApprovals`: read as they are now, never from a cache (a write may run). */
  resolveContext: (
    input: unknown,
    request: HttpRequest,
    turn?: { answersApprovals: boolean; grantUse?: ChatGrantUse | readonly ChatGrantUse[] | undefined },
  ) => Promise<ResolveChatContextResult>;
  /** Who calls the tools from outside a conversation (`handler.tools`); absent: nobody may. */
  resolveToolCaller?: ((request: HttpRequest) => Promise<ResolveChatContextResult>) | undefined;
  /** With `grantSessions`: a running answer stops when its grant's session ends. */
  watchGrantSession?: GrantSessionWatch | undefined;
  bodyLimits: { maxBytes: number; maxDepth: number };
  bodySchema: ReturnType<typeof chatBodySchema>;
  userMessageSchema: ReturnType<typeof userMessageSchema>;
  instructions?: string | undefined;
  stepBudget?: number | undefined;
  modelCall?: ModelCallOptions | undefined;
  contextBudget: Required<ContextBudget>;
  /** The per-user token budget, when configured. */
  tokenBudget?: TokenBudget | undefined;
  /** The project's budget, when configured (a module's, `createUsageModule`). */
  budget?: TurnBudget | undefined;
  /** What a whole turn can be sent at most, in tokens: what a project budget reserves for it. */
  turnReserveTokens: number;
  /** Prices each turn's usage, when configured. */
  priceTurn?: PriceTurn | undefined;
  /** Where each settled turn and title call goes (the usage roll-ups), when configured. */
  usage?: UsageRecorder | undefined;
  /** What a new user message must fit. */
  storageQuota: StorageQuota;
  /** Where running answers are recorded for pages that re-attach; false: nowhere. */
  resumableStreams: ResumableStreams | false;
  /** Whether each running turn is marked in the store (`markRunningTurns`). */
  markRunningTurns: boolean;
  /** How a new conversation gets its title; false: it gets none. */
  titles: ConversationTitleOptions | false;
  now: () => number;
  generateId: () => string;
  onError: (error: unknown) => void;
  emit: ChatEventListener;
  /** Which approvals need a fresh user verification, and how a proof is checked; none when not configured. */
  stepUp?: ChatStepUpOptions | undefined;
}

/** What the request's last message is: a new user message, an edit, a regeneration, or approval answers. */
type LastMessage =
  | { kind: 'user'; message: ChatMessage; intent?: UserIntent }
  | { kind: 'branch'; request: BranchRequest }
  | { kind: 'answers'; message: ChatMessage };

/**
 * The new turn's last message: a user message, or an assistant message with approval answers. As
 * `useChat` sends them, an edit is a user message with `messageId` its own id, and a regeneration has
 * the `regenerate-message` trigger (its `messageId`, when given, names the answer to replace).
 */
async function parseLastMessage(
  deps: ChatRouteDependencies,
  body: { messages: unknown[]; trigger?: string | undefined; messageId?: string | undefined },
): Promise<LastMessage> {
  const last = body.messages.at(-1);
  const isUser = (last as { role?: unknown } | undefined)?.role === 'user';
  if (body.trigger === 'regenerate-message' && !isUser)
    return { kind: 'branch', request: { kind: 'regenerate', messageId: body.messageId } };
  if (isUser) {
    const message = storedUserMessage(parseWithSchema(deps.userMessageSchema, last, 'The last message is invalid.'));
    // useChat's regenerate sends the question last; its edit, the edited message under its own id.
    if (body.trigger === 'regenerate-message')
      return { kind: 'user', message, intent: { kind: 'regenerate', messageId: body.messageId } };
    if (body.messageId === undefined) return { kind: 'user', message };
    if (body.messageId !== message.id)
      throw new DeskpilotError('invalid_request', {
        detail: 'An edit sends the edited message last, under its own id.',
        errors: [{ path: 'messageId', message: 'Must be the id of the last message' }],
      });
    return { kind: 'user', message, intent: { kind: 'edit' } };
  }
  const message = parseWithSchema(
    assistantMessageSchema,
    last,
    'The last message must be a user message or an assistant message with approval answers.',
  ) as ChatMessage;
  // Parts of tools that do not exist at all are refused here; capabilities are checked later, per answer.
  const toolNames = message.parts.flatMap((part) => (isToolUIPart(part) ? [getToolName(part)] : []));
  const validation = await safeValidateUIMessages({
    messages: [message],
    tools: deps.toolSet.catalogueWith(toolNames),
  });
  if (!validation.success)
    throw new DeskpilotError('invalid_request', { detail: 'The last message is invalid.', cause: validation.error });
  return { kind: 'answers', message };
}

/**
 * Whether a chat request may answer approval cards: its last message is not the user's (approval
 * answers come on the assistant's message). Decided from the raw body before anything else is read,
 * erring on the side of a fresh read (a regeneration of an answer reads the flags now too).
 */
function answersApprovals(body: { messages: unknown[] }): boolean {
  return (body.messages.at(-1) as { role?: unknown } | undefined)?.role !== 'user';
}

/** An open conversation: the record, its messages, and whether this request created it. */
type OpenedConversation = Extract<OpenConversationResult, { ok: true }>;

/** How a turn begins: answered without the model (`replay`), or by the model from `history`. */
type TurnStart =
  | { kind: 'replay'; messageId: string; chunks: UIMessageChunk[] }
  | {
      kind: 'resumed';
      history: ChatMessage[];
      assistantId: string;
      approvedCalls: ReadonlyMap<string, string>;
      approvedCards?: ReadonlyMap<string, unknown>;
      approvedStepUps?: ReadonlyMap<string, ApprovalStepUp>;
      /** Chunks to stream before the answer goes on (the decisions on answered cards). */
      decisions: UIMessageChunk[];
    };

/** Saves the user's message, or applies the approval answers, to the stored conversation. */
async function beginTurn(
  deps: ChatRouteDependencies,
  last: LastMessage,
  opened: OpenedConversation,
  scope: ApprovalScope,
  signInSessionId: string | undefined,
  stepUpProofs: Readonly<Record<string, string>> | undefined,
): Promise<TurnStart> {
  const { session, messages: stored } = opened;
  // An approval can only ever be answered through its card in the stored conversation: with no
  // card left unsettled there (or no conversation before this request), none needs denying.
  const mayHavePendingApprovals =
    !opened.created &&
    stored.some((message) => message.role === 'assistant' && message.parts.some(isUnsettledApproval));
  if (last.kind === 'answers') {
    return answerApprovals({
      store: deps.store,
      gate: deps.gate,
      sessionId: session.id,
      stored,
      incoming: last.message,
      scope,
      capabilityOf: deps.toolSet.capabilityOf,
      signInSessionId,
      stepUp: deps.stepUp,
      stepUpProofs,
      onError: deps.onError,
      now: deps.now,
      emit: deps.emit,
    });
  }
  // An edit or a regeneration of a message the conversation does not have (refused before it was
  // stored, say) is a new message like any other.
  const tree = last.kind === 'user' && last.intent ? await deps.store.getMessageTree(session.id) : undefined;
  const request =
    last.kind === 'branch' ? last.request : tree && branchRequestOf(tree, stored, last.message, last.intent!);
  const common = {
    store: deps.store,
    approvalStore: deps.approvalStore,
    gate: deps.gate,
    sessionId: session.id,
    stored,
    generateId: deps.generateId,
    quota: deps.storageQuota,
  };
  const started =
    last.kind === 'branch' || request
      ? await startBranch({ ...common, tree, request: last.kind === 'branch' ? last.request : request! })
      : await startUserTurn({ ...common, mayHavePendingApprovals, message: last.message, added: opened.added });
  if (!started.ok) throw started.error;
  return {
    kind: 'resumed',
    history: started.history,
    assistantId: started.assistantId,
    approvedCalls: new Map(),
    decisions: [],
  };
}

/**
 * {@link beginTurn}; when it refuses a turn before anything of it was stored (the storage quota), the
 * conversation this request created goes too: a refusal leaves nothing in the user's list.
 */
async function beginOrDiscard(...args: Parameters<typeof beginTurn>): ReturnType<typeof beginTurn> {
  const [deps, , opened] = args;
  try {
    return await beginTurn(...args);
  } catch (error) {
    if (opened.created)
      await discardRefusedConversation(deps.store, opened.session.id, { now: deps.now, onError: deps.onError });
    throw error;
  }
}

/**
 * `POST /chat`: validate the body → resolve the context → pick the model → rate limit per client
 * address, then per `userEmail` → open the conversation (owner only) → start the user turn or apply
 * the approval answers → run the tool loop and stream → persist the assistant turn, also when the
 * client went away. Each step passes with no side effect before it.
 */
export async function serveChat(
  deps: ChatRouteDependencies,
  request: HttpRequest,
  turn: RunningTurn,
  body: ChatBody,
): Promise<HttpResponse> {
  // A request that answers approval cards may run a write: its flags are read now, not from a cache.
  const resolved = await deps.resolveContext(body.context, request, { answersApprovals: answersApprovals(body) });
  if (!resolved.ok) throw resolved.error;
  const { context, signInSessionId, grantSessionId } = resolved;
  const picked = pickChatModel({ models: deps.models, provider: body.provider });
  if (!picked.ok) throw picked.error;
  const last = await parseLastMessage(deps, body);
  const admission = await deps.admission.admit(request, context.userEmail);
  if (!admission.allowed) throw admission.error;
  // Before anything is stored: a refused turn leaves the conversation as it was. The reservations (the
  // user's, the project's) are taken atomically here and settled when the turn ends, so parallel turns
  // cannot all pass.
  const hold = await reserveSpend(deps, {
    projectKey: context.projectKey,
    user: context.userEmail,
    model: { provider: picked.model.provider, modelId: picked.model.modelId },
    admin: context.userRole === 'admin',
  });
  try {
    return await runTurn(deps, turn, {
      body,
      context,
      signInSessionId,
      grantSessionId,
      picked: picked.model,
      last,
      headers: admission.headers,
      hold,
    });
  } catch (error) {
    // No model call was made: the reservation goes back.
    await hold?.settle(undefined);
    throw error;
  }
}

/** The turn once it is let in: open the conversation, save the message or apply the answers, and stream. */
async function runTurn(
  deps: ChatRouteDependencies,
  turn: RunningTurn,
  admitted: {
    body: { sessionId: string; stepUp?: Record<string, string> | undefined };
    context: ChatContext;
    signInSessionId: string | undefined;
    grantSessionId?: string | undefined;
    picked: ChatModel;
    last: LastMessage;
    headers: Record<string, string>;
    hold: SpendHold | undefined;
  },
): Promise<HttpResponse> {
  const { body, context, last, hold } = admitted;
  // The user's message is added as the conversation opens, where the store can (one round trip); an
  // edit or a regeneration with the question last adds it only once it is known to be new. One with an
  // answer last needs a conversation that exists (404 for anyone else's), and creates none.
  const opened =
    last.kind === 'branch'
      ? await openExisting(deps.store, body.sessionId, context)
      : await openConversation({
          store: deps.store,
          sessionId: body.sessionId,
          context,
          now: deps.now,
          add: last.kind === 'user' && !last.intent ? last.message : undefined,
          quota: deps.storageQuota,
        });
  if (!opened.ok) throw opened.error;
  const { session } = opened;
  const scope: ApprovalScope = {
    chatSessionId: session.id,
    userEmail: context.userEmail,
    projectKey: context.projectKey,
    capabilities: context.capabilities,
    signInSessionId: admitted.signInSessionId ?? null,
  };
  const started = await beginOrDiscard(deps, last, opened, scope, admitted.signInSessionId, body.stepUp);
  if (started.kind === 'replay') {
    await hold?.settle(undefined);
    turn.settle();
    return replayWithoutModel(started.messageId, started.chunks, admitted.headers);
  }
  const { title, afterSaved } = afterSavedOf(deps, session, started.history, turn.cut.signal);
  const approvedToolNames = approvedToolNamesOf(started.history, started.approvedCalls);
  // Approved calls of a source's tools: their systems are asked now, even in a pause after a failure.
  const refresh = approvedToolNames.filter((name) => !Object.hasOwn(deps.toolSet.catalogue, name));
  const sourced = await sourcedTools(deps, context.projectKey, turn.cut.signal, refresh);
  const turnTools = deps.toolSet.forTurn({
    sourced,
    approvedToolNames,
    context,
    sessionId: session.id,
    approvedCalls: started.approvedCalls,
    approvedCards: started.approvedCards,
    approvedStepUps: started.approvedStepUps,
    signInSessionId: admitted.signInSessionId,
  });
  // The step-up each card of this turn asks for, by tool call id (what its approval request carries).
  const stepUps = new Map<string, StepUpRequest>();
  // When it started, first: what tells, if it is reported abandoned, whether its answer was saved since.
  const turnId = `${deps.now()}-${crypto.randomUUID()}`;
  await markRunning(deps, session.id, turnId);
  const recording = await recordingOf(deps, session.id, turnId);
  // A session that ends while the answer runs (signed out, deprovisioned) stops it.
  const stopWatching =
    admitted.grantSessionId === undefined ? undefined : deps.watchGrantSession?.(admitted.grantSessionId, turn.cut);
  try {
    return await streamAssistantTurn({
      recording,
      model: admitted.picked,
      instructions: buildInstructions({ context, workingMemory: session.workingMemory, base: deps.instructions }),
      history: started.history,
      assistantId: started.assistantId,
      turnTools,
      approvalDescriptorOf: (toolCallId) => withStepUp(turnTools.cardOf(toolCallId), stepUps.get(toolCallId)),
      leadingChunks: started.decisions,
      stepBudget: deps.stepBudget,
      modelCall: deps.modelCall,
      contextBudget: deps.contextBudget,
      recordUsage: hold && ((usage, cost) => hold.settle(usage, cost)),
      ...spendOptions(deps, session),
      onApprovalRequest: proposeApproval(deps, scope, turnTools, stepUps),
      store: deps.store,
      sessionId: session.id,
      headers: admitted.headers,
      cut: turn.cut.signal,
      afterSaved: async (message) => (await clearRunning(deps, session.id, turnId), afterSaved(message)),
      title,
      onSettled: () => {
        stopWatching?.();
        turn.settle();
      },
      now: deps.now,
      onError: deps.onError,
      emit: deps.emit,
    });
  } catch (error) {
    // The turn did not start: nothing will be recorded, and a reader is told rather than left waiting.
    stopWatching?.();
    if (recording?.fail) recording.fail();
    else recording?.close();
    await clearRunning(deps, session.id, turnId);
    throw error;
  }
}

/** Records each approval a turn's model asks for (the card), and the step-up it asks of the browser. */
function proposeApproval(
  deps: ChatRouteDependencies,
  scope: ApprovalScope,
  turnTools: ReturnType<ChatToolSet['forTurn']>,
  stepUps: Map<string, StepUpRequest>,
) {
  return async (call: { toolCallId: string; toolName: string; input: unknown }) => {
    const capability = deps.toolSet.capabilityOf(call.toolName) ?? '';
    const record = await deps.gate.propose(scope, { ...call, capability });
    const card = turnTools.cardOf(call.toolCallId);
    // The card asks the browser for a fresh user verification over this approval's binding.
    if (deps.stepUp && asksStepUp(deps.stepUp.policy, { ...call, capability, card }, deps.onError))
      stepUps.set(call.toolCallId, { binding: stepUpBinding(record) });
    deps.emit({ type: 'approval-proposed', tool: call.toolName });
    return record.id;
  };
}

/** With `markRunningTurns`, the store records that this turn runs (what a restart after a crash aborts). */
async function markRunning(deps: ChatRouteDependencies, sessionId: string, turnId: string): Promise<void> {
  if (!deps.markRunningTurns) return;
  await deps.store.markRunningTurn?.(sessionId, turnId).catch(deps.onError);
}

/** The turn ended (its answer saved, or it never started): its mark goes. */
async function clearRunning(deps: ChatRouteDependencies, sessionId: string, turnId: string): Promise<void> {
  if (!deps.markRunningTurns) return;
  await deps.store.clearRunningTurn?.(sessionId, turnId).catch(deps.onError);
}

/** The tools of the calls an answer approved, from the message that holds their cards. */
function approvedToolNamesOf(history: ChatMessage[], approvedCalls: ReadonlyMap<string, string>): string[] {
  if (approvedCalls.size === 0) return [];
  const parts = history.at(-1)?.parts ?? [];
  return parts.flatMap((part) => (isToolUIPart(part) && approvedCalls.has(part.toolCallId) ? [getToolName(part)] : []));
}

/**
 * A new conversation's title and what runs once its answer is saved (hidden cards settled). Without a
 * title model the title is the question's first words, saved in the answer's own write; a model's
 * title is one call after the answer, off its path.
 */
function afterSavedOf(
  deps: ChatRouteDependencies,
  session: ChatSessionRecord,
  history: ChatMessage[],
  signal: AbortSignal,
): { title: string | undefined; afterSaved: (answer: ChatMessage) => Promise<void> } {
  const titles = deps.titles;
  // The first exchange of a conversation with no title yet (a retry of it included) names it.
  const question = history.length === 1 ? history[0] : undefined;
  const untitled = titles && session.title === null && question?.role === 'user' ? question : undefined;
  const byModel =
    untitled && titles && titles.model
      ? (answer: ChatMessage) =>
          titleConversation({
            ...titles,
            store: deps.store,
            sessionId: session.id,
            question: untitled,
            answer,
            signal,
            onError: deps.onError,
            // Priced and reported as a turn is.
            priceTurn: deps.priceTurn,
            spent: async (written) => {
              deps.emit({ ...written, projectKey: session.projectKey });
              await recordSpend(deps, session, { ...written, kind: 'title', tools: [] });
            },
            // The same budgets as the user's turns: a title is one more model call of theirs.
            reserve: (tokens, model) =>
              reserveSpend(deps, {
                projectKey: session.projectKey,
                user: session.userEmail,
                model,
                tokens,
                background: true,
              }),
          })
      : undefined;
  const title = untitled && !byModel ? (titleFromText(textOf(untitled)) ?? undefined) : undefined;
  return {
    title,
    afterSaved: async (answer: ChatMessage) => {
      await settleHiddenCards(deps, session.id, answer).catch(deps.onError);
      await byModel?.(answer);
    },
  };
}

/**
 * A card waits only on the branch shown: an answer saved off it (its question was edited away while it
 * ran) has its cards denied, in the approval store and as stored.
 */
async function settleHiddenCards(deps: ChatRouteDependencies, sessionId: string, answer: ChatMessage) {
  const cards = answer.parts.filter(isAwaitingApproval);
  if (cards.length === 0) return;
  if ((await deps.store.getMessages(sessionId)).some((message) => message.id === answer.id)) return;
  for (const card of cards) await deps.gate.deny(card.approval.id, 'superseded');
  await deps.store.upsertMessages(sessionId, [denyAwaitingApprovals(answer)]);
}

/** One of the caller's conversations with its active branch, when it exists and is not deleted. */
async function openExisting(store: ChatStore, sessionId: string, context: ChatContext): Promise<OpenedConversation> {
  const session = await ownConversation(store, sessionId, context);
  return { ok: true, session, created: false, messages: (await store.getMessages(session.id)) as ChatMessage[] };
}

/** A recording of the turn's answer, when resumable streams are on and their store answers (else none: the turn goes on). */
async function recordingOf(
  deps: ChatRouteDependencies,
  sessionId: string,
  turnId: string,
): Promise<StreamRecording | undefined> {
  if (!deps.resumableStreams) return undefined;
  try {
    return await deps.resumableStreams.record(sessionId, { turnId });
  } catch (error) {
    deps.onError(error);
    return undefined;
  }
}

/** A stream answered without the model: recorded outcomes or denials, then `finish`. */
function replayWithoutModel(
  messageId: string,
  chunks: UIMessageChunk[],
  headers: Record<string, string>,
): HttpResponse {
  return createChatStreamResponse({
    headers,
    stream: createUIMessageStream({
      execute: ({ writer }) => {
        writer.write({ type: 'start', messageId });
        for (const chunk of chunks) writer.write(chunk);
        writer.write({ type: 'finish', finishReason: 'stop' });
      },
    }),
  });
}

/** `POST /chat/history`: the conversation, to its owner only (410 `conversation_deleted` once deleted). */
export async function serveChatHistory(
  deps: ChatRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof chatRoutes)['chatHistory']>,
): Promise<HttpResponse> {
  const body = await input.body();
  const resolved = await deps.resolveContext(body.context, request);
  if (!resolved.ok) throw resolved.error;
  const { context } = resolved;
  // Its own limit: reading a conversation costs no model call.
  const admission = await deps.historyAdmission.admit(request, context.userEmail);
  if (!admission.allowed) throw admission.error;
  const session = await ownConversation(deps.store, body.sessionId, context);
  const payload = historyJson(session, await deps.store.getMessageTree(session.id));
  return jsonResponse(200, payload, [...Object.entries(admission.headers), ['cache-control', 'no-store']]);
}

/** A card with the step-up it asks for (`approval.descriptor.stepUp`), when its approval needs one. */
function withStepUp(card: unknown, stepUp: StepUpRequest | undefined): unknown {
  return stepUp ? { ...(card as object | undefined), stepUp } : card;
}

/** How a turn of `session` is priced, and where what it used goes. */
function spendOptions(deps: ChatRouteDependencies, session: { projectKey: string; userEmail: string }) {
  return {
    priceTurn: deps.priceTurn,
    projectKey: session.projectKey,
    spent:
      deps.usage &&
      ((spend: Omit<UsageEntry, 'projectKey' | 'user' | 'at' | 'kind'>) =>
        recordSpend(deps, session, { ...spend, kind: 'turn' })),
  };
}

/** Hands a settled turn or title call to the usage roll-ups, when the handler keeps them; a failure is reported, never thrown. */
async function recordSpend(
  deps: ChatRouteDependencies,
  session: { projectKey: string; userEmail: string },
  spend: Pick<UsageEntry, 'model' | 'usage' | 'cost' | 'kind' | 'tools'>,
): Promise<void> {
  const usage = deps.usage;
  if (!usage) return;
  const { cost, ...rest } = spend;
  const entry: UsageEntry = {
    projectKey: session.projectKey,
    user: session.userEmail,
    at: deps.now(),
    ...rest,
    ...(cost ? { cost } : {}),
  };
  await recordBounded(() => usage.record(entry), deps.onError);
}
