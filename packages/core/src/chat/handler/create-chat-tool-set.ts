import {
  asSchema,
  jsonSchema,
  tool,
  zodSchema,
  type Schema,
  type ToolApprovalConfiguration,
  type ToolApprovalStatus,
  type ToolSet,
} from 'ai';
import type { ChatEventListener } from '../chat-event.js';
import type { ApprovalDecision, ApprovalRecord, ApprovalStepUp } from '../approval/approval-store.js';
import type { ApprovalGate } from '../approval/create-approval-gate.js';
import type { CommerceBackend } from '../backends/commerce-backend.js';
import type { TicketBackend } from '../backends/ticket-backend.js';
import type { CapabilityRegistry } from '../../capabilities/capabilities.js';
import type { ChatContext } from '../context/parse-chat-context.js';
import type { ChatStore } from '../conversation/chat-store.js';
import { workingMemoryUpdateSchema, type WorkingMemoryUpdate } from '../conversation/working-memory.js';
import type { ApprovalCard, ChatToolContext, ChatToolDefinition, PreparedApproval } from '../tools/chat-tool.js';
import type { ChatToolSource } from '../tools/chat-tool-source.js';
import { ChatToolError, safeToolErrorMessage } from '../tools/chat-tool-error.js';
import { canonicalJson } from '../../encoding/canonical-hash.js';
import { inSpan } from '../../telemetry/spans.js';

/** Options of {@link createChatToolSet}. */
export interface ChatToolSetOptions {
  definitions: readonly ChatToolDefinition[];
  capabilities: CapabilityRegistry;
  gate: ApprovalGate;
  store: ChatStore;
  commerce: CommerceBackend;
  tickets?: TicketBackend | undefined;
  /** Bytes of working memory per conversation. */
  workingMemoryBytes: number;
  now: () => number;
  /** Receives unexpected tool failures (the model only gets a safe message). */
  onError: (error: unknown) => void;
  /** Receives each execution's outcome. @default none */
  emit?: ChatEventListener | undefined;
  /** Where more tools come from at run time (a project's MCP servers): their tools are passed to `forTurn`. @default none */
  sources?: readonly ChatToolSource[] | undefined;
}

/** What one turn may use. */
export interface ChatTurnTools {
  tools: ToolSet;
  /** The write tools, which run only once the user approved the call (after their pre-check, when they have one). */
  toolApproval: ToolApprovalConfiguration<ToolSet, unknown>;
  /** The card a write call was proposed with (its tool's pre-check), by tool call id. */
  cardOf(toolCallId: string): ApprovalCard | undefined;
}

/** The chat's tools: the catalogue every tool part is validated against, and the tool set of each turn. */
export interface ChatToolSet {
  /** Every tool that exists, whoever may use it: what stored and incoming tool parts are validated against. */
  catalogue: ToolSet;
  /**
   * The catalogue with the tools of `toolNames` that belong to a source (any input shape: an answer
   * runs the input its approval recorded, never the one sent), for validating parts of those tools.
   */
  catalogueWith(toolNames: Iterable<string>): ToolSet;
  /** The capability a tool needs, `null` for one that needs none or does not exist. */
  capabilityOf(toolName: string): string | null;
  /** The AI SDK tool set of one turn: only offered tools, each re-checked at execution. */
  forTurn(turn: {
    context: ChatContext;
    sessionId: string;
    approvedCalls: ReadonlyMap<string, string>;
    /** The card each approved call was shown with (its approval request's descriptor), by tool call id. */
    approvedCards?: ReadonlyMap<string, unknown> | undefined;
    /** The step-up each approved call was approved with, by tool call id: recorded with its decision. */
    approvedStepUps?: ReadonlyMap<string, ApprovalStepUp> | undefined;
    /** Recorded with each approval this turn executes (who approved it, from which session). */
    signInSessionId?: string | undefined;
    /** The sources' tools for this turn's project (a name the handler already has is left out). */
    sourced?: readonly ChatToolDefinition[] | undefined;
    /**
     * The tools of the approved calls: one of a source that did not answer this turn still runs its
     * approval, to a recorded error ("cannot be reached; nothing was done"), never to a turn that fails.
     */
    approvedToolNames?: Iterable<string> | undefined;
  }): ChatTurnTools;
}

/** How a tool's execution ends: unexpected failures reported and made safe for the model, each outcome emitted. */
function toolOutcomes(options: Pick<ChatToolSetOptions, 'onError' | 'emit'>) {
  return {
    /** Runs a tool; an unexpected failure is reported, and the model gets only a safe message. */
    async runSafely<T>(run: () => Promise<T>): Promise<T> {
      try {
        return await run();
      } catch (error) {
        if (!ChatToolError.isInstance(error)) options.onError(error);
        throw new ChatToolError(safeToolErrorMessage(error));
      }
    },
    /** Runs an execution in a span `deskpilot.chat.tool` (beneath the turn's), and emits its outcome once it settled: `succeeded`, or `failed`. */
    reported<T>(tool: string, run: () => Promise<T>): Promise<T> {
      return inSpan('deskpilot.chat.tool', { 'deskpilot.tool': tool }, async (span) => {
        try {
          const output = await run();
          options.emit?.({ type: 'tool-executed', tool, outcome: 'succeeded' });
          span.setAttribute('deskpilot.tool.outcome', 'succeeded');
          return output;
        } catch (error) {
          options.emit?.({ type: 'tool-executed', tool, outcome: 'failed' });
          span.setAttribute('deskpilot.tool.outcome', 'failed');
          throw error;
        }
      });
    },
    /** A call refused before it ran (no permission, no approval): emitted, and the model told why. */
    refuse(tool: string, message: string): Promise<never> {
      options.emit?.({ type: 'tool-executed', tool, outcome: 'refused' });
      return inSpan('deskpilot.chat.tool', { 'deskpilot.tool': tool, 'deskpilot.tool.outcome': 'refused' }, () =>
        Promise.reject(new ChatToolError(message)),
      );
    },
  };
}

/**
 * The definitions the backends can serve (`availableWith`), once every one has been checked: a tool
 * whose capability is not registered would never be offered, silently — that is refused here.
 */
function availableDefinitions(options: ChatToolSetOptions): readonly ChatToolDefinition[] {
  for (const definition of options.definitions) {
    const problem = definitionProblem(definition, options.capabilities);
    if (problem) throw new TypeError(problem);
  }
  const backends = { commerce: options.commerce, tickets: options.tickets };
  return options.definitions.filter((definition) => definition.availableWith?.(backends) ?? true);
}

/** Why a definition cannot be offered (its capability is not registered, or it would skip the gate of a write), or null. */
function definitionProblem(definition: ChatToolDefinition, capabilities: CapabilityRegistry): string | null {
  if (definition.capability !== null && !Object.hasOwn(capabilities, definition.capability))
    return `Tool ${definition.name} needs the capability ${definition.capability}, which is not registered: add it with defineCapabilities({ ${definition.capability}: { kind: 'read' | 'write' } }).`;
  if (definition.requiresApproval === false && isWrite(definition, capabilities))
    return `Tool ${definition.name} needs the write capability ${definition.capability}: a write always asks for approval.`;
  return null;
}

/** Whether a tool's calls wait for the user's approval: a write capability's, or one that asks for it. */
function isWrite(definition: ChatToolDefinition, capabilities: CapabilityRegistry): boolean {
  return (
    definition.requiresApproval === true ||
    (definition.capability !== null && capabilities[definition.capability]?.kind === 'write')
  );
}

/** What a tool knows of the request it runs for. */
function toolContextFor(
  options: Pick<ChatToolSetOptions, 'commerce' | 'tickets'>,
  context: ChatContext,
): ChatToolContext {
  return {
    userEmail: context.userEmail,
    projectKey: context.projectKey,
    businessType: context.businessType,
    capabilities: context.capabilities,
    commerce: options.commerce,
    tickets: options.tickets,
  };
}

/**
 * Runs an approved write, its pre-check first once more (when it has one): a card that comes out
 * different from the one approved (the order changed meanwhile), or a call that can no longer
 * succeed, runs nothing, and the model is told. Runs inside `gate.execute`: exactly once.
 */
async function runApproved(
  definition: ChatToolDefinition,
  input: unknown,
  context: ChatToolContext,
  approvedCard: unknown,
): Promise<unknown> {
  if (definition.prepareApproval) {
    const now = await definition.prepareApproval(input, context);
    if (!now.ok) throw new ChatToolError(now.message);
    if (approvedCard !== undefined && canonicalJson(now.card) !== canonicalJson(approvedCard))
      throw new ChatToolError(
        `This changed since it was approved; it would now be: ${now.card.summary}. Nothing was done: propose it again to decide anew.`,
      );
  }
  return definition.execute(input, context);
}

/**
 * A write tool's approval status: its pre-check's card (`user-approval`, the summary as the request's
 * reason), or, when the call cannot succeed or the check failed, none (`not-applicable`: its
 * `execute` then refuses with the reason, since no approval exists). Each result is kept in `prepared`.
 */
function approvalStatusOf(options: {
  definition: ChatToolDefinition;
  toolContext: ChatToolContext;
  prepared: Map<string, PreparedApproval>;
  onError: (error: unknown) => void;
}) {
  return async (input: unknown, { toolCallId }: { toolCallId: string }): Promise<ToolApprovalStatus> => {
    let result: PreparedApproval;
    try {
      result = await options.definition.prepareApproval!(input, options.toolContext);
    } catch (error) {
      if (!ChatToolError.isInstance(error)) options.onError(error);
      result = { ok: false, message: safeToolErrorMessage(error) };
    }
    options.prepared.set(toolCallId, result);
    return result.ok ? { type: 'user-approval', reason: result.card.summary } : 'not-applicable';
  };
}

/**
 * Who approved a call — the conversation's owner: only they can answer its cards — when, from which
 * session, with which step-up.
 */
function decisionOf(
  context: ChatContext,
  at: number,
  signInSessionId: string | undefined,
  stepUp: ApprovalStepUp | undefined,
): ApprovalDecision {
  return { by: context.userEmail, at, session: signInSessionId ?? null, ...(stepUp ? { stepUp } : {}) };
}

/** The `updateWorkingMemory` tool of one conversation. */
function workingMemoryToolFor(
  options: Pick<ChatToolSetOptions, 'store' | 'now' | 'workingMemoryBytes'> & {
    schema: Schema<WorkingMemoryUpdate>;
    reported: ReturnType<typeof toolOutcomes>['reported'];
    runSafely: ReturnType<typeof toolOutcomes>['runSafely'];
  },
  sessionId: string,
) {
  const { store, now, reported, runSafely } = options;
  return tool({
    description:
      'Keep short notes for later in this conversation: set keys (short slugs) to notes, or remove keys. Other notes are kept.',
    inputSchema: options.schema,
    execute: (update) =>
      reported('updateWorkingMemory', () =>
        runSafely(async () => {
          // One atomic store update: parallel turns of a conversation never lose each other's notes.
          const saved = await store.updateSession(sessionId, {
            workingMemory: { ...update, maxBytes: options.workingMemoryBytes },
            updatedAt: now(),
          });
          if (!saved.ok && saved.reason === 'working_memory_full')
            throw new ChatToolError(
              `Working memory is full (${options.workingMemoryBytes} bytes); remove notes first.`,
            );
          if (!saved.ok) throw new ChatToolError('This conversation no longer exists.');
          return { saved: true, keys: Object.keys(saved.session.workingMemory) };
        }),
      ),
  });
}

/** What a turn knows of its calls: the approved ones (with their cards and step-ups), and the pre-checks so far. */
interface TurnCalls {
  approvedCalls: ReadonlyMap<string, string>;
  approvedCards: ReadonlyMap<string, unknown>;
  approvedStepUps: ReadonlyMap<string, ApprovalStepUp>;
  prepared: ReadonlyMap<string, PreparedApproval>;
  signInSessionId: string | undefined;
}

/** The handler's definitions with their schemas wrapped once, then a turn's sourced ones, wrapped now. */
function withSchemas(
  definitions: readonly ChatToolDefinition[],
  inputSchemaOf: ReadonlyMap<string, Schema<unknown>>,
  sourced: readonly ChatToolDefinition[],
): Array<{ definition: ChatToolDefinition; inputSchema: Schema<unknown> }> {
  return [
    ...definitions.map((definition) => ({ definition, inputSchema: inputSchemaOf.get(definition.name)! })),
    ...sourced.map((definition) => ({ definition, inputSchema: asSchema(definition.inputSchema) })),
  ];
}

/**
 * The sources' tools of a turn, with a stand-in for each approved call's tool that belongs to a source
 * but did not come this turn (its server is down): the approval runs it exactly once, to an error that
 * says nothing was done. A stand-in proposes nothing (`not-applicable`): a new call of it refuses.
 */
function withStandIns(
  sourced: readonly ChatToolDefinition[],
  approvedToolNames: Iterable<string>,
  definitions: readonly ChatToolDefinition[],
  sourceCapabilityOf: (toolName: string) => string | undefined,
): { extra: ChatToolDefinition[]; standIns: ReadonlySet<ChatToolDefinition> } {
  const names = new Set([...definitions, ...sourced].map((definition) => definition.name));
  const standIns = [...new Set(approvedToolNames)].flatMap((name): ChatToolDefinition[] => {
    const capability = names.has(name) ? undefined : sourceCapabilityOf(name);
    if (capability === undefined) return [];
    return [
      {
        name,
        kind: 'source',
        capability,
        requiresApproval: true,
        description: `${name} cannot be reached now.`,
        inputSchema: jsonSchema<unknown>({}),
        execute: () =>
          Promise.reject(new ChatToolError(`${name} cannot be reached now; nothing was done. Propose it again later.`)),
      },
    ];
  });
  return { extra: [...sourced, ...standIns], standIns: new Set(standIns) };
}

/** The sources' tools as far as configuration knows them: each one's capability, and the catalogue with them. */
function sourceLookup(sources: readonly ChatToolSource[], catalogue: ToolSet) {
  const sourceCapabilityOf = (toolName: string) => {
    for (const source of sources) {
      const capability = source.capabilityOf(toolName);
      if (capability !== undefined) return capability;
    }
    return undefined;
  };
  // Tool parts of a source's tool are checked for shape only: an answer runs its approval's recorded input.
  const anyInput = tool({ inputSchema: jsonSchema<unknown>({}) });
  const catalogueWith = (toolNames: Iterable<string>): ToolSet => {
    const sourced = [...toolNames].filter((name) => !Object.hasOwn(catalogue, name) && sourceCapabilityOf(name));
    return sourced.length === 0
      ? catalogue
      : { ...catalogue, ...Object.fromEntries(sourced.map((name) => [name, anyInput])) };
  };
  return { sourceCapabilityOf, catalogueWith };
}

/**
 * Keeps the sources' definitions that can be offered: a name the handler already has (a built-in, the
 * memory tool) or that came twice, and a definition that fails {@link definitionProblem}, are left out
 * and reported once each (a source must never shadow a tool, nor skip the gate).
 */
function sourcedFilter(options: Pick<ChatToolSetOptions, 'capabilities' | 'onError'>, reserved: ReadonlySet<string>) {
  const reported = new Set<string>();
  const report = (name: string, message: string) => {
    if (reported.has(name) || reported.size >= 1_000) return;
    reported.add(name);
    options.onError(new TypeError(message));
  };
  return (sourced: readonly ChatToolDefinition[]): ChatToolDefinition[] => {
    const seen = new Set<string>();
    return sourced.filter((definition) => {
      const problem = reserved.has(definition.name)
        ? `A tool source offers ${definition.name}, a name the chat already has: the source's tool is left out.`
        : seen.has(definition.name)
          ? `Two tools of the sources are named ${definition.name}: the second is left out.`
          : definitionProblem(definition, options.capabilities);
      seen.add(definition.name);
      if (problem) report(definition.name, problem);
      return problem === null;
    });
  };
}

/** Every tool that exists, as the SDK validates tool parts against them. */
function catalogueOf(
  definitions: readonly ChatToolDefinition[],
  inputSchemaOf: ReadonlyMap<string, Schema<unknown>>,
  memorySchema: Schema<WorkingMemoryUpdate>,
): ToolSet {
  return Object.fromEntries([
    ...definitions.map((definition) => [definition.name, tool({ inputSchema: inputSchemaOf.get(definition.name)! })]),
    ['updateWorkingMemory', tool({ inputSchema: memorySchema })],
  ]);
}

/**
 * Runs an approved write through the gate: exactly once, with the stored input, the approval id as
 * the idempotency key downstream, and who approved it recorded with the decision.
 */
async function executeApproved(
  options: Pick<ChatToolSetOptions, 'gate' | 'now'>,
  call: {
    definition: ChatToolDefinition;
    toolContext: ChatToolContext;
    approvalId: string;
    toolCallId: string;
    context: ChatContext;
    turn: TurnCalls;
    abortSignal?: AbortSignal | undefined;
  },
): Promise<unknown> {
  const { toolCallId, turn } = call;
  const run = (record: ApprovalRecord) =>
    runApproved(
      call.definition,
      record.input,
      { ...call.toolContext, idempotencyKey: call.approvalId, abortSignal: call.abortSignal },
      turn.approvedCards.get(toolCallId),
    );
  const decision = decisionOf(call.context, options.now(), turn.signInSessionId, turn.approvedStepUps.get(toolCallId));
  const outcome = await options.gate.execute(call.approvalId, run, decision);
  if (outcome.type === 'error') throw new ChatToolError(outcome.message);
  return outcome.output;
}

/** Creates the chat's tool set; each schema is wrapped once, so the SDK derives its JSON Schema once, not per request. */
export function createChatToolSet(options: ChatToolSetOptions): ChatToolSet {
  const definitions = availableDefinitions(options);
  const capabilityOf = new Map(definitions.map((definition) => [definition.name, definition.capability]));
  const inputSchemaOf = new Map(definitions.map((definition) => [definition.name, asSchema(definition.inputSchema)]));
  const memorySchema = zodSchema(workingMemoryUpdateSchema);
  const catalogue = catalogueOf(definitions, inputSchemaOf, memorySchema);
  const { sourceCapabilityOf, catalogueWith } = sourceLookup(options.sources ?? [], catalogue);
  const acceptSourced = sourcedFilter(options, new Set([...inputSchemaOf.keys(), 'updateWorkingMemory']));
  const { runSafely, reported, refuse } = toolOutcomes(options);
  const toolContextOf = (context: ChatContext) => toolContextFor(options, context);
  const approvalOf = (definition: ChatToolDefinition, context: ChatContext, prepared: Map<string, PreparedApproval>) =>
    approvalStatusOf({ definition, toolContext: toolContextOf(context), prepared, onError: options.onError });
  /** A definition as an SDK tool: permission re-checked, writes only through the approval gate. */
  const toTool = (
    definition: ChatToolDefinition,
    inputSchema: Schema<unknown>,
    context: ChatContext,
    write: boolean,
    turn: TurnCalls,
  ) => {
    const toolContext = toolContextOf(context);
    return tool({
      description: definition.description,
      inputSchema,
      execute: async (input: unknown, { toolCallId, abortSignal }) => {
        if (definition.capability !== null && context.capabilities[definition.capability] !== true) {
          return refuse(definition.name, `You do not have permission to use ${definition.name}.`);
        }
        if (!write)
          return reported(definition.name, () =>
            runSafely(() => definition.execute(input, { ...toolContext, abortSignal })),
          );
        const approvalId = turn.approvedCalls.get(toolCallId);
        if (!approvalId) {
          // Its pre-check found it cannot succeed (no card was proposed): the model is told why.
          const prepared = turn.prepared.get(toolCallId);
          return refuse(
            definition.name,
            prepared && !prepared.ok ? prepared.message : 'This action needs an approval first.',
          );
        }
        return reported(definition.name, () =>
          executeApproved(options, { definition, toolContext, approvalId, toolCallId, context, turn, abortSignal }),
        );
      },
    });
  };
  const workingMemoryTool = (sessionId: string) =>
    workingMemoryToolFor({ ...options, schema: memorySchema, reported, runSafely }, sessionId);
  return {
    catalogue,
    catalogueWith,
    capabilityOf: (toolName) => capabilityOf.get(toolName) ?? sourceCapabilityOf(toolName) ?? null,
    forTurn({
      context,
      sessionId,
      approvedCalls,
      approvedCards = new Map(),
      approvedStepUps = new Map(),
      signInSessionId,
      sourced = [],
      approvedToolNames = [],
    }) {
      const tools: ToolSet = {};
      const toolApproval: Record<string, ToolApprovalStatus | ReturnType<typeof approvalOf>> = {};
      const prepared = new Map<string, PreparedApproval>();
      const { extra, standIns } = withStandIns(
        acceptSourced(sourced),
        approvedToolNames,
        definitions,
        sourceCapabilityOf,
      );
      const turn = { approvedCalls, approvedCards, approvedStepUps, prepared, signInSessionId };
      for (const { definition, inputSchema } of withSchemas(definitions, inputSchemaOf, extra)) {
        if (definition.businessTypes && !definition.businessTypes.includes(context.businessType)) continue;
        if (definition.capability !== null && context.capabilities[definition.capability] !== true) continue;
        const write = isWrite(definition, options.capabilities);
        if (write)
          toolApproval[definition.name] = definition.prepareApproval
            ? approvalOf(definition, context, prepared)
            : 'user-approval';
        tools[definition.name] = toTool(definition, inputSchema, context, write, turn);
        if (standIns.has(definition)) toolApproval[definition.name] = 'not-applicable';
      }
      tools.updateWorkingMemory = workingMemoryTool(sessionId);
      return {
        tools,
        toolApproval,
        cardOf: (toolCallId) => ((result) => (result?.ok ? result.card : undefined))(prepared.get(toolCallId)),
      };
    },
  };
}
