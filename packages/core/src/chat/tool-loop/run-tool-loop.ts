import {
  ToolChoiceViolationError,
  experimental_streamTextLowMemory as streamTextLowMemory,
  isStepCount,
  wrapLanguageModel,
  type LanguageModel,
  type ModelMessage,
  type TextStreamPart,
  type TimeoutConfiguration,
  type ToolApprovalConfiguration,
  type ToolSet,
} from 'ai';
import {
  boundModelInput,
  omittedNotice,
  toolDefinitionChars,
  type ContextBudget,
} from '../context/bound-model-input.js';

/** Options of {@link runToolLoop}. */
export interface RunToolLoopOptions {
  model: LanguageModel;
  instructions: string;
  messages: ModelMessage[];
  tools: ToolSet;
  toolApproval?: ToolApprovalConfiguration<ToolSet, unknown>;
  /** Most model steps per turn, every tool kind counted; the last one is forced to answer in text. @default 6 */
  stepBudget?: number;
  /** Text streamed when the budget ran out and the last step said nothing. */
  budgetNotice?: string;
  /**
   * Called for each approval request before it is streamed, and awaited: record it, and return the id
   * to stream in place of the SDK's. If it throws, the card is not streamed (fail closed).
   */
  onApprovalRequest?: (request: {
    approvalId: string;
    toolName: string;
    toolCallId: string;
    input: unknown;
  }) => Promise<string>;
  abortSignal?: AbortSignal;
  /**
   * Bounds every model call of the loop, not only the first: before each step the messages (the
   * conversation and this turn's steps so far) are cut to fit with the instructions and the tool
   * definitions, older turns first, then this turn's oldest tool results (see `boundModelInput`).
   * @default none: the messages are sent as given
   */
  contextBudget?: ContextBudget | undefined;
  /** How the model call is bounded: the SDK's timeouts (`chunkMs`: longest silence; `stepMs`, `totalMs`) and retries of a failed call. */
  modelCall?: ModelCallOptions | undefined;
}

/** Bounds of each model call: passed to the AI SDK as `timeout` and `maxRetries`. */
export interface ModelCallOptions {
  /** The AI SDK's timeout configuration, e.g. `{ chunkMs: 60000 }`: a provider silent that long fails the turn with an error part. @default none */
  timeout?: TimeoutConfiguration<ToolSet>;
  /** Retries of a failed call (a 429, a 5xx) before the turn fails. @default 2 (the SDK's) */
  maxRetries?: number;
  /**
   * Longest the turn may go without a part from the model (or a running tool) — before the first
   * token or between two, a provider that accepted and went silent included: then the provider call is
   * cancelled and the turn ends with an error part, saved `failed`. The wait before a retry (the SDK's
   * backoff, or the provider's `Retry-After`) is not silence: the watch pauses until the next attempt.
   * @default none
   */
  idleTimeoutMs?: number;
  /**
   * Longest one model call may take from its first attempt to its last part, retries and their waits
   * included: past it the call is cancelled, as for silence. @default none
   */
  callDeadlineMs?: number;
}

/** The running loop: its parts, and how it went once they have ended. */
export interface RunToolLoopResult {
  /**
   * The next part, read straight off the model's stream with no stream stage between (a host that
   * writes each part out in a stage of its own reads here). One read at a time: await each before the
   * next. Read the parts here or through `stream`, not both.
   */
  read(): Promise<ReadableStreamReadResult<TextStreamPart<ToolSet>>>;
  /** The same parts as a stream (made on first use). */
  readonly stream: ReadableStream<TextStreamPart<ToolSet>>;
  /** Model steps completed so far. */
  readonly steps: number;
  /**
   * The size of each model call's input so far, as the context budget counts it (instructions, tool
   * definitions and messages), and how many stored messages it left out. Empty without a budget.
   */
  readonly calls: ReadonlyArray<{ chars: number; omittedMessages: number; cutResults: number }>;
  /** Characters the model wrote so far: text, reasoning and tool call inputs (for an estimate of its tokens). */
  readonly outputChars: number;
  /** True when the loop used its whole step budget. */
  readonly budgetExhausted: boolean;
  /**
   * True when the stream carried an error part: the model call failed (after its retries), went
   * silent, or an approval could not be recorded. A tool that failed or was called with invalid
   * input is not a failed turn: the model sees the error and answers.
   */
  readonly failed: boolean;
}

export const defaultBudgetNotice =
  'I reached the step limit for this turn before finishing. Ask me to continue if you need more.';

/**
 * Runs the model with tools under a step budget: `stopWhen` stops at the budget, `prepareStep` forces
 * the last step to be tool-less so the reply ends in text, and a fixed notice is streamed if that last
 * step still said nothing. An approval request ends the loop (the SDK stops there); each one is first
 * recorded through `onApprovalRequest`.
 *
 * @example
 * const loop = runToolLoop({ model, instructions, messages, tools, stepBudget: 6 });
 * const ui = toUIMessageStream({ stream: loop.stream });
 */
export function runToolLoop(options: RunToolLoopOptions): RunToolLoopResult {
  const budget = options.stepBudget ?? 6;
  if (!Number.isInteger(budget) || budget < 1) throw new TypeError('stepBudget must be a positive integer');
  // The loop reads `result.stream` once and nothing else. Plain `streamText` tees its stream so that
  // more readers can replay it, and the unread branch holds every part of the answer until it ends.
  const calls: Array<{ chars: number; omittedMessages: number; cutResults: number }> = [];
  const bound = options.contextBudget && boundEachCall(options, options.contextBudget, calls);
  const watch = createCallWatch(options.modelCall);
  const result = streamTextLowMemory({
    model: watch ? watch.wrap(options.model) : options.model,
    instructions: options.instructions,
    messages: options.messages,
    tools: options.tools,
    toolApproval: options.toolApproval,
    stopWhen: isStepCount(budget),
    prepareStep: async ({ stepNumber, messages }) => ({
      ...(stepNumber >= budget - 1 ? { toolChoice: 'none' as const } : {}),
      ...(bound ? await bound(messages) : {}),
    }),
    abortSignal: options.abortSignal,
    // Errors reach the stream as error parts, and the handler reports them; the SDK's default would
    // also print each one to the console, past the host's logger.
    onError: () => {},
    ...(options.modelCall?.timeout === undefined ? {} : { timeout: options.modelCall.timeout }),
    ...(options.modelCall?.maxRetries === undefined ? {} : { maxRetries: options.modelCall.maxRetries }),
    // The model calls' spans, once the host registers an AI SDK telemetry integration: grouped under
    // one name, without prompts or answers (they hold what users and customers wrote).
    telemetry: { functionId: 'deskpilot.chat', recordInputs: false, recordOutputs: false },
  });

  const { observe, progress } = createLoopObserver({
    budget,
    budgetNotice: options.budgetNotice,
    onApprovalRequest: options.onApprovalRequest,
  });
  const parts = observedParts(result.stream, observe, watch, () => progress.noteFailure());
  let stream: ReadableStream<Part> | undefined;
  return {
    read: parts.read,
    get stream() {
      return (stream ??= new ReadableStream<Part>(
        {
          async pull(controller) {
            const { done, value } = await parts.read();
            if (done) controller.close();
            else controller.enqueue(value);
          },
          cancel: parts.cancel,
        },
        { highWaterMark: 0 },
      ));
    },
    // Getters: the figures are read once the parts have ended.
    get steps() {
      return progress.steps;
    },
    calls,
    get budgetExhausted() {
      return progress.budgetExhausted;
    },
    get outputChars() {
      return progress.outputChars;
    },
    get failed() {
      return progress.failed;
    },
  };
}

type Part = TextStreamPart<ToolSet>;

/**
 * The `prepareStep` half of the context budget: each step's messages bounded, the instructions with
 * a notice once something was left out. What a step returns is what the next one starts from (AI SDK
 * 7 carries `messages` forward), so the messages left out add up across steps.
 */
function boundEachCall(
  options: RunToolLoopOptions,
  budget: ContextBudget,
  calls: Array<{ chars: number; omittedMessages: number; cutResults: number }>,
) {
  const maxChars = budget.maxChars ?? 200_000;
  const maxToolResultChars = budget.maxToolResultChars ?? 8_000;
  let toolsChars: Promise<number> | undefined;
  let omitted = 0;
  return async (messages: ModelMessage[]) => {
    const tools = await (toolsChars ??= toolDefinitionChars(options.tools));
    // Room for the notice is kept whether or not it is needed: one bound per call.
    const instructionsChars =
      JSON.stringify(options.instructions).length + omittedNotice(omitted + messages.length).length + tools;
    const bounded = boundModelInput(messages, { maxChars, maxToolResultChars, instructionsChars });
    omitted += bounded.omittedMessages;
    const instructions = omitted > 0 ? options.instructions + omittedNotice(omitted) : options.instructions;
    calls.push({
      chars: bounded.chars + JSON.stringify(instructions).length + tools,
      omittedMessages: omitted,
      cutResults: bounded.cutResults,
    });
    return { messages: bounded.messages, instructions };
  };
}

/** What the loop has done so far, read once its stream has ended. */
type LoopProgress = Pick<RunToolLoopResult, 'steps' | 'budgetExhausted' | 'failed' | 'outputChars'> & {
  noteFailure(): void;
};

/**
 * Watches the parts of the loop: counts steps, records approval requests, and ends a turn that used
 * its budget without text with the notice.
 */
function createLoopObserver(options: {
  budget: number;
  budgetNotice?: string | undefined;
  onApprovalRequest: RunToolLoopOptions['onApprovalRequest'];
}) {
  const { budget, onApprovalRequest } = options;
  let steps = 0;
  let textInStep = false;
  let lastStepHadText = false;
  // A model that calls a tool on the forced tool-less step has still used up the budget: that ends
  // the turn with the notice, not as a failure.
  let ignoredToolChoice = false;
  let failed = false;
  let outputChars = 0;
  /** Records an approval request; the part to stream has the id the callback returns, or is an error (fail closed). */
  const recordApproval = async (
    part: Extract<Part, { type: 'tool-approval-request' }>,
    record: NonNullable<typeof onApprovalRequest>,
  ): Promise<Part> => {
    try {
      const { toolName, toolCallId, input } = part.toolCall;
      const approvalId = await record({ approvalId: part.approvalId, toolName, toolCallId, input });
      return { ...part, approvalId };
    } catch (error) {
      failed = true;
      return { type: 'error', error };
    }
  };
  /**
   * Notes what a part says about the loop; returns the part to stream in its place, or undefined to
   * drop it. Parts to stream before it go to `add`.
   */
  const observe = (part: Part, add: (part: Part) => void): Part | undefined | Promise<Part> => {
    switch (part.type) {
      case 'start-step':
        textInStep = false;
        break;
      case 'text-delta':
        outputChars += part.text.length;
        if (part.text.trim() !== '') textInStep = true;
        break;
      case 'reasoning-delta':
        outputChars += part.text.length;
        break;
      case 'tool-call':
        outputChars += JSON.stringify(part.input ?? null).length;
        break;
      case 'finish-step':
        steps++;
        lastStepHadText = textInStep;
        break;
      case 'tool-approval-request':
        if (onApprovalRequest) return recordApproval(part, onApprovalRequest);
        break;
      case 'error':
        if (ToolChoiceViolationError.isInstance(part.error)) {
          ignoredToolChoice = true;
          return undefined;
        }
        failed = true;
        break;
      // Provider-specific parts (Anthropic's `message_start` with its usage and ids): internals of
      // the provider call, neither for the client nor for the stored history.
      case 'custom':
        return undefined;
      case 'finish':
        if (ignoredToolChoice || (steps >= budget && !lastStepHadText)) {
          const id = 'budget-notice';
          add({ type: 'text-start', id });
          add({ type: 'text-delta', id, text: options.budgetNotice ?? defaultBudgetNotice });
          add({ type: 'text-end', id });
        }
        if (ignoredToolChoice) return { ...part, finishReason: 'stop' };
        break;
    }
    return part;
  };
  const progress: LoopProgress = {
    get steps() {
      return steps;
    },
    get budgetExhausted() {
      return steps >= budget || ignoredToolChoice;
    },
    get failed() {
      return failed;
    },
    get outputChars() {
      return outputChars;
    },
    noteFailure: () => void (failed = true),
  };
  return { observe, progress };
}

/**
 * The source's parts as `observe` replaces them (dropped when it answers undefined), read one at a
 * time. A function rather than a stream stage: a stage costs a few promises per part, and this is
 * synchronous for every part but approval requests.
 */
function observedParts(
  source: ReadableStream<Part>,
  observe: ReturnType<typeof createLoopObserver>['observe'],
  watch: CallWatch | undefined,
  noteFailure: () => void,
) {
  const reader = source.getReader();
  const watchdog = watch?.start(reader);
  // Parts `observe` adds ahead of the one it returns (the budget notice), and the watchdog's error.
  const queued: Part[] = [];
  const add = (part: Part) => void queued.push(part);
  let ended = false;
  const next = async (): Promise<ReadableStreamReadResult<Part>> => {
    for (;;) {
      if (queued.length > 0) return { done: false, value: queued.shift()! };
      if (ended) return { done: true, value: undefined };
      let read: ReadableStreamReadResult<Part>;
      try {
        read = await reader.read();
      } catch (error) {
        ended = true;
        watchdog?.stop();
        throw error;
      }
      watchdog?.heard(read.done ? undefined : read.value);
      if (read.done) {
        ended = true;
        watchdog?.stop();
        if (watchdog?.timedOut) {
          noteFailure();
          add({ type: 'error', error: watchdog.timedOut });
        }
        continue;
      }
      const observed = observe(read.value, add);
      const out = observed instanceof Promise ? await observed : observed;
      if (out === undefined) continue;
      if (queued.length === 0) return { done: false, value: out };
      add(out);
    }
  };
  return {
    read: next,
    cancel: (reason?: unknown) => {
      ended = true;
      watchdog?.stop();
      return reader.cancel(reason);
    },
  };
}

/** The model (or a tool) said nothing for the configured time, or a call outran its deadline: the turn ends with an error part. */
export class ModelTimeoutError extends Error {
  constructor(ms: number, kind: 'silence' | 'deadline' = 'silence') {
    super(
      kind === 'silence'
        ? `The model sent nothing for ${ms} ms.`
        : `The model call took longer than its ${ms} ms deadline.`,
    );
    this.name = 'ModelTimeoutError';
  }
}

type CallWatch = NonNullable<ReturnType<typeof createCallWatch>>;

/**
 * The watch over the loop's model calls: silence (`idleTimeoutMs`) and each call's deadline
 * (`callDeadlineMs`). The model is wrapped so that the watch sees each attempt begin and fail: from a
 * failed attempt to the next one the SDK waits (its backoff, or the provider's `Retry-After`), and
 * that wait is not silence. One timer per turn, not one per part: it checks a few times per period,
 * and cancels the source (the SDK aborts the provider call) once a bound is passed.
 */
function createCallWatch(modelCall: ModelCallOptions | undefined) {
  const idleTimeoutMs = modelCall?.idleTimeoutMs;
  const deadlineMs = modelCall?.callDeadlineMs;
  if (idleTimeoutMs === undefined && deadlineMs === undefined) return undefined;
  let lastHeard = Date.now();
  let waitingToRetry = false;
  // When the current call's first attempt began; undefined between calls.
  let callStartedAt: number | undefined;
  // Whether the model was wrapped (its attempts seen); a model given by id is not.
  let wrapped = false;
  return {
    /** The model, its attempts reported to the watch (a model given by id is left as it is). */
    wrap(model: LanguageModel): LanguageModel {
      if (typeof model === 'string') return model;
      wrapped = true;
      return wrapLanguageModel({
        model,
        middleware: {
          specificationVersion: 'v4',
          wrapStream: async ({ doStream }) => {
            lastHeard = Date.now();
            waitingToRetry = false;
            callStartedAt ??= lastHeard;
            let result: Awaited<ReturnType<typeof doStream>>;
            try {
              result = await doStream();
            } catch (error) {
              // The SDK retries a failed attempt after a wait, or gives up: silence is not counted meanwhile.
              waitingToRetry = true;
              throw error;
            }
            if (deadlineMs === undefined) return result;
            // The call is over once the model's own stream ends: tools that run after it are not its time.
            const ended = () => void (callStartedAt = undefined);
            return { ...result, stream: result.stream.pipeThrough(new TransformStream({ flush: ended })) };
          },
        },
      });
    },
    /** Starts watching the loop's parts. */
    start(reader: ReadableStreamDefaultReader<Part>) {
      const state: { timedOut: ModelTimeoutError | undefined } = { timedOut: undefined };
      const periods = [idleTimeoutMs, deadlineMs].filter((ms): ms is number => ms !== undefined);
      const timer = setInterval(
        () => {
          const now = Date.now();
          if (idleTimeoutMs !== undefined && !waitingToRetry && now - lastHeard >= idleTimeoutMs)
            state.timedOut = new ModelTimeoutError(idleTimeoutMs);
          else if (deadlineMs !== undefined && callStartedAt !== undefined && now - callStartedAt >= deadlineMs)
            state.timedOut = new ModelTimeoutError(deadlineMs, 'deadline');
          else return;
          clearInterval(timer);
          void reader.cancel(state.timedOut).catch(() => {});
        },
        Math.max(10, Math.floor(Math.min(...periods) / 4)),
      );
      return {
        heard: (part: Part | undefined) => {
          lastHeard = Date.now();
          // A model given by id is not wrapped: its step's start stands for its call's.
          if (!wrapped && part?.type === 'start-step') callStartedAt ??= lastHeard;
          // A step's call is over once its parts have ended; the next step's call has its own deadline.
          if (part?.type === 'finish-step') callStartedAt = undefined;
        },
        stop: () => clearInterval(timer),
        get timedOut() {
          return state.timedOut;
        },
      };
    },
  };
}
