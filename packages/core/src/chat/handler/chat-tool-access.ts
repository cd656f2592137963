import { asSchema, type JSONSchema7, type Tool, type ToolApprovalStatus, type UIMessage } from 'ai';
import { base64url } from 'jose';
import { DeskpilotError } from '../../errors/deskpilot-error.js';
import type { HttpRequest } from '../../http/http-request.js';
import { stepUpBinding } from '../../step-up/step-up-proof.js';
import type { ApprovalOutcome, ApprovalState } from '../approval/approval-store.js';
import { asksStepUp } from '../approval/step-up.js';
import type { ChatContext } from '../context/parse-chat-context.js';
import { ChatToolError, safeToolErrorMessage } from '../tools/chat-tool-error.js';
import type { ApprovalCard } from '../tools/chat-tool.js';
import type { ChatRouteDependencies } from './chat-routes.js';
import type { ChatTurnTools } from './create-chat-tool-set.js';
import type { ChatMessage } from './chat-message.js';
import { discardRefusedConversation, openConversation } from './open-conversation.js';
import { sourcedTools } from './sourced-tools.js';

/** Who calls the chat's tools from outside a conversation (an MCP client), as the handler verified it. */
export interface ChatToolCaller {
  context: ChatContext;
  /** The sign-in session the caller's grant or host session names: recorded with each approval. */
  signInSessionId?: string | undefined;
  /** The request it came with: its client address is what the per-address limit counts. */
  request: HttpRequest;
}

/** One tool a caller may use, as another protocol describes it. */
export interface ChatToolDescription {
  name: string;
  description: string;
  inputSchema: JSONSchema7;
  /** Calls wait for the user's approval in the studio: the call answers `approval-required`. */
  requiresApproval: boolean;
}

/** How a call from outside ended. */
export type ChatToolCallResult =
  | { type: 'output'; output: unknown }
  /**
   * A write, recorded as a pending approval in a new conversation of the caller (`conversationId`)
   * that the user answers in the studio; nothing ran. `approval(caller, approvalId)` tells the outcome.
   */
  | {
      type: 'approval-required';
      approvalId: string;
      conversationId: string;
      card: ApprovalCard | null;
      expiresAt: number;
    }
  /** The call was refused or failed; the message is safe to show. */
  | { type: 'error'; message: string };

/** A pending or settled approval, as its owner may read it. */
export interface ChatToolApprovalStatus {
  approvalId: string;
  toolName: string;
  state: ApprovalState;
  /** The recorded result once it ran (`done`). */
  outcome: ApprovalOutcome | null;
  /** Why it was denied, when it was. */
  reason: string | null;
  expiresAt: number;
}

/**
 * The chat's tools for callers outside a conversation — an MCP server endpoint (`createMcpEndpoint`
 * from `@deskpilot/mcp`) — under the same rules: identity only from a signed grant or the host's
 * session, the caller's capability flags, the per-user rate limit, and every write through the
 * approval gate, answered by the user in the studio.
 */
export interface ChatToolAccess {
  /**
   * Who calls: the host's `resolveToolCaller`, or a grant signed for the `tools` use sent as
   * `Authorization: Bearer <grant>` (a chat grant is refused: its holder could answer the cards). A
   * handler with neither refuses (`unauthenticated`): identity is never taken on a caller's word here.
   */
  authenticate(
    request: HttpRequest,
  ): Promise<{ ok: true; caller: ChatToolCaller } | { ok: false; error: DeskpilotError }>;
  /** The tools the caller's flags and project allow (the memory tool aside: it belongs to a conversation). */
  list(caller: ChatToolCaller): Promise<ChatToolDescription[]>;
  /**
   * Calls a tool: a read runs; a write is proposed for approval and runs nothing (over the caller's
   * storage quota: `quota_exceeded`, thrown as a `DeskpilotError`). The request was counted when it
   * was authenticated.
   */
  call(
    caller: ChatToolCaller,
    name: string,
    input: unknown,
    options?: { client?: string; signal?: AbortSignal },
  ): Promise<ChatToolCallResult>;
  /** An approval of the caller's (same user and project), or null. */
  approval(caller: ChatToolCaller, approvalId: string): Promise<ChatToolApprovalStatus | null>;
}

/** The two messages that hold a proposal made from outside: what was asked, then its card. */
function proposalMessages(
  deps: ChatRouteDependencies,
  call: { name: string; input: unknown; toolCallId: string; client: string | undefined },
  approval: { id: string; descriptor: unknown; reason: string | undefined },
): [UIMessage, UIMessage] {
  // The caller's own words (its user agent) stay in metadata: the model never reads them as the user's.
  const question: UIMessage = {
    id: deps.generateId(),
    role: 'user',
    metadata: { source: 'mcp', ...(call.client ? { client: call.client.slice(0, 200) } : {}) },
    parts: [{ type: 'text', text: `An MCP client asked to run ${call.name}.` }],
  };
  const card = {
    type: `tool-${call.name}`,
    toolCallId: call.toolCallId,
    state: 'approval-requested',
    input: call.input,
    approval: {
      id: approval.id,
      ...(approval.descriptor === undefined ? {} : { descriptor: approval.descriptor }),
      ...(approval.reason ? { requestReason: approval.reason } : {}),
    },
  };
  const answer = {
    id: deps.generateId(),
    role: 'assistant',
    metadata: { status: 'awaiting_approval' },
    parts: [{ type: 'step-start' }, card],
  } as UIMessage;
  return [question, answer];
}

/** What a proposal over the storage quota answers. */
const quotaError = () =>
  new DeskpilotError('quota_exceeded', { detail: 'Your conversations hold as much as they may: delete some first.' });

/** A message added within the storage quota, or the quota error. */
async function addWithinQuota(deps: ChatRouteDependencies, conversationId: string, message: UIMessage) {
  const added = await deps.store.addMessage(conversationId, message, deps.storageQuota);
  if (added.quotaExceeded) throw quotaError();
}

/**
 * Records the proposal in a new conversation of the caller, where the user answers it: the
 * conversation and the question first (within the storage quota), then the approval, then its card.
 */
async function propose(
  deps: ChatRouteDependencies,
  caller: ChatToolCaller,
  turn: ChatTurnTools,
  call: { name: string; input: unknown; toolCallId: string; conversationId: string; client: string | undefined },
): Promise<ChatToolCallResult> {
  const { context } = caller;
  const card = turn.cardOf(call.toolCallId) ?? null;
  const draft = proposalMessages(deps, call, { id: '', descriptor: undefined, reason: undefined });
  // The question is added as the conversation opens, within the storage quota; over it, the conversation
  // this call opened is removed again: a refused call leaves nothing in the user's list.
  const opened = await openConversation({
    store: deps.store,
    sessionId: call.conversationId,
    context,
    now: deps.now,
    add: draft[0] as ChatMessage,
    quota: deps.storageQuota,
  });
  if (!opened.ok) throw opened.error;
  try {
    if (opened.added?.quotaExceeded) throw quotaError();
    if (!opened.added) await addWithinQuota(deps, call.conversationId, draft[0]);
  } catch (error) {
    await discardRefusedConversation(deps.store, call.conversationId, {
      now: deps.now,
      onError: deps.onError,
      tombstone: true,
    });
    throw error;
  }
  const scope = {
    chatSessionId: call.conversationId,
    userEmail: context.userEmail,
    projectKey: context.projectKey,
    capabilities: context.capabilities,
    signInSessionId: caller.signInSessionId ?? null,
  };
  const capability = deps.toolSet.capabilityOf(call.name) ?? '';
  const record = await deps.gate.propose(scope, {
    toolName: call.name,
    toolCallId: call.toolCallId,
    input: call.input,
    capability,
  });
  deps.emit({ type: 'approval-proposed', tool: call.name });
  const stepUp =
    deps.stepUp &&
    asksStepUp(
      deps.stepUp.policy,
      { toolName: call.name, input: call.input, capability, card: card ?? undefined },
      deps.onError,
    )
      ? { binding: stepUpBinding(record) }
      : undefined;
  const descriptor = stepUp ? { ...card, stepUp } : (card ?? undefined);
  const [, answer] = proposalMessages(deps, call, { id: record.id, descriptor, reason: card?.summary });
  try {
    await addWithinQuota(deps, call.conversationId, answer);
  } catch (error) {
    // No card to answer it from: the approval can never be decided, so it is denied now.
    await deps.gate.deny(record.id, 'superseded').catch(deps.onError);
    throw error;
  }
  await deps.store.updateConversation(call.conversationId, {
    title: `${card?.summary ?? call.name} (over MCP)`.slice(0, 200),
  });
  return {
    type: 'approval-required',
    approvalId: record.id,
    conversationId: call.conversationId,
    card,
    expiresAt: record.expiresAt,
  };
}

/** Who calls: the host's own check, or a grant for the `tools` use as a bearer token; nobody without one of them. */
async function authenticate(
  deps: ChatRouteDependencies,
  request: HttpRequest,
): ReturnType<ChatToolAccess['authenticate']> {
  if (!deps.resolveToolCaller)
    return {
      ok: false,
      error: new DeskpilotError('unauthenticated', {
        detail:
          'Tools are served to callers with a verified identity only: configure contextSecret or resolveToolCaller.',
      }),
    };
  const resolved = await deps.resolveToolCaller(request).catch((error: unknown) => {
    if (DeskpilotError.isInstance(error)) return { ok: false as const, error };
    throw error;
  });
  if (!resolved.ok) return resolved;
  // Every request counts, listings and status reads included, in a limit of its own: an agent never
  // uses up the limits its user's page needs (to answer its cards, say).
  const admission = await deps.toolsAdmission.admit(request, resolved.context.userEmail);
  if (!admission.allowed) return { ok: false, error: admission.error };
  return { ok: true, caller: { context: resolved.context, signInSessionId: resolved.signInSessionId, request } };
}

/** An approval of the caller's (same user and project), or null. */
async function approvalStatus(
  deps: ChatRouteDependencies,
  caller: ChatToolCaller,
  approvalId: string,
): Promise<ChatToolApprovalStatus | null> {
  // An id the gate never made (control characters, a megabyte) is nobody's approval: the store is not asked.
  const record = /^[\x21-\x7e]{1,200}$/.test(approvalId) ? await deps.approvalStore.get(approvalId) : null;
  if (!record || record.userEmail !== caller.context.userEmail || record.projectKey !== caller.context.projectKey)
    return null;
  const expired = record.state === 'pending' && deps.now() >= record.expiresAt;
  return {
    approvalId: record.id,
    toolName: record.toolName,
    state: expired ? 'denied' : record.state,
    outcome: record.outcome,
    reason: expired ? 'expired' : record.reason,
    expiresAt: record.expiresAt,
  };
}

/** Characters and nesting an outside call's input may have: what a proposal stores and a card shows. */
const maxInputChars = 64 * 1024;
const maxInputDepth = 32;

/** Whether a call's input is a JSON object within {@link maxInputChars} and {@link maxInputDepth} (checked without recursion). */
function isBoundedObject(input: unknown): boolean {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return false;
  const pending: Array<[unknown, number]> = [[input, 1]];
  while (pending.length > 0) {
    const [value, depth] = pending.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > maxInputDepth) return false;
    for (const child of Object.values(value)) pending.push([child, depth + 1]);
  }
  return JSON.stringify(input).length <= maxInputChars;
}

/** Creates the tool access of a chat handler over its normalised dependencies. */
export function createChatToolAccess(deps: ChatRouteDependencies): ChatToolAccess {
  const turnOf = async (caller: ChatToolCaller, conversationId: string, signal?: AbortSignal) =>
    deps.toolSet.forTurn({
      context: caller.context,
      sessionId: conversationId,
      approvedCalls: new Map(),
      signInSessionId: caller.signInSessionId,
      sourced: await sourcedTools(deps, caller.context.projectKey, signal),
    });

  return {
    authenticate: (request) => authenticate(deps, request),
    approval: (caller, approvalId) => approvalStatus(deps, caller, approvalId),
    async list(caller) {
      const turn = await turnOf(caller, 'tool-list');
      const listed = Object.entries(turn.tools).filter(([name]) => name !== 'updateWorkingMemory');
      return Promise.all(
        listed.map(async ([name, tool]) => ({
          name,
          description: typeof tool.description === 'string' ? tool.description : name,
          inputSchema: await asSchema((tool as Tool).inputSchema).jsonSchema,
          requiresApproval: Object.hasOwn(turn.toolApproval, name),
        })),
      );
    },

    async call(caller, name, input, options = {}) {
      const conversationId = crypto.randomUUID();
      const turn = await turnOf(caller, conversationId, options.signal);
      const tool = name === 'updateWorkingMemory' ? undefined : (turn.tools[name] as Tool | undefined);
      if (!tool?.execute) return { type: 'error', message: `No tool named ${name} is offered to you.` };
      if (!isBoundedObject(input))
        return { type: 'error', message: `The input of ${name} is too large or not an object.` };
      const parsed = await asSchema(tool.inputSchema).validate?.(input);
      if (parsed && !parsed.success) return { type: 'error', message: `The input of ${name} is invalid.` };
      const value = parsed ? parsed.value : input;
      const toolCallId = `mcp_${base64url.encode(crypto.getRandomValues(new Uint8Array(12)))}`;
      const approval = (turn.toolApproval as Record<string, unknown>)[name] as
        | ToolApprovalStatus
        | ((input: unknown, options: { toolCallId: string }) => Promise<ToolApprovalStatus>)
        | undefined;
      const status = typeof approval === 'function' ? await approval(value, { toolCallId }) : approval;
      const asks = status !== undefined && status !== 'not-applicable';
      if (asks)
        return propose(deps, caller, turn, {
          name,
          input: value,
          toolCallId,
          conversationId,
          client: options.client,
        });
      try {
        // A write whose pre-check found it cannot succeed refuses here, with the reason.
        const output: unknown = await tool.execute(value, {
          toolCallId,
          messages: [],
          abortSignal: options.signal,
        } as never);
        return { type: 'output', output };
      } catch (error) {
        return {
          type: 'error',
          message: ChatToolError.isInstance(error) ? error.message : safeToolErrorMessage(error),
        };
      }
    },
  };
}
