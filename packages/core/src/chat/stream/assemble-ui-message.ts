import { parsePartialJson, type FinishReason, type UIMessage, type UIMessageChunk } from 'ai';

/** A part of the message being assembled, written to field by field. */
type Part = Record<string, unknown> & { type: string };

/** A tool call whose input is still streaming: its text so far, and what its part needs. */
interface PartialToolCall {
  text: string;
  toolName: string;
  dynamic: boolean;
  inputEncoding?: 'json' | 'text' | undefined;
  title?: unknown;
  toolMetadata?: unknown;
}

/** What {@link createUIMessageAssembler} gives: the message grows with each chunk added. */
export interface UIMessageAssembler<Message extends UIMessage = UIMessage> {
  /** Applies one chunk of the UI message stream, synchronously. */
  add(chunk: UIMessageChunk): void;
  /** The `finishReason` of the `finish` chunk, once it came. */
  readonly finishReason: FinishReason | undefined;
  /** The assembled message; a tool call still streaming its input gets its input parsed as far as it goes. */
  message(): Promise<Message>;
}

const isToolPart = (part: Part) => part.type === 'dynamic-tool' || part.type.startsWith('tool-');
const isDataChunk = (chunk: {
  type: string;
}): chunk is { type: `data-${string}`; id?: string; data: unknown; transient?: boolean } =>
  chunk.type.startsWith('data-');
const toolNameOf = (part: Part) =>
  part.type === 'dynamic-tool' ? (part.toolName as string) : part.type.slice('tool-'.length);
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `base` with `update` merged in, nested objects merged key by key (as the SDK merges message metadata). */
function mergeMetadata(base: unknown, update: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(update)) return update;
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(update))
    merged[key] = isPlainObject(value) && isPlainObject(merged[key]) ? mergeMetadata(merged[key], value) : value;
  return merged;
}

/** The message being assembled, and what its open parts need. */
interface Assembly {
  message: { id: string; role: 'assistant'; metadata?: unknown; parts: Part[] };
  texts: Map<string, Part>;
  reasonings: Map<string, Part>;
  partialCalls: Map<string, PartialToolCall>;
  /**
   * Parts whose input is the partial parse of their streamed text, as the SDK leaves it after each
   * delta (also once a later chunk changes only their state): parsed when the message is read.
   */
  partialInputs: Map<Part, { text: string; encoding: PartialToolCall['inputEncoding'] }>;
  finishReason: FinishReason | undefined;
}

/** Index of the first part of the current step. */
const stepStart = (state: Assembly) => state.message.parts.findLastIndex((part) => part.type === 'step-start') + 1;
const inStep = (state: Assembly, match: (part: Part) => boolean) =>
  state.message.parts.slice(stepStart(state)).find(match);
/** A tool call's part: in the current step, else the latest anywhere. */
const toolCall = (state: Assembly, toolCallId: string) =>
  inStep(state, (part) => isToolPart(part) && part.toolCallId === toolCallId) ??
  state.message.parts.findLast((part) => isToolPart(part) && part.toolCallId === toolCallId);

interface ToolCallUpdate {
  toolCallId: string;
  toolName: string;
  dynamic: boolean;
  state: string;
  providerMetadata?: unknown;
  providerExecuted?: unknown;
  title?: unknown;
  toolMetadata?: unknown;
}
type ToolFields = {
  input: unknown;
  output?: unknown;
  errorText?: unknown;
  rawInput?: unknown;
  preliminary?: unknown;
  inputEncoding?: unknown;
};

/** Creates or updates a tool call's part; `fields` left `undefined` clear what the part had. */
function writeToolPart(state: Assembly, call: ToolCallUpdate, fields: ToolFields, existing?: Part): Part {
  const type = call.dynamic ? 'dynamic-tool' : `tool-${call.toolName}`;
  const part =
    existing ??
    inStep(
      state,
      (candidate) =>
        (call.dynamic
          ? candidate.type === 'dynamic-tool'
          : candidate.type !== 'dynamic-tool' && isToolPart(candidate)) && candidate.toolCallId === call.toolCallId,
    );
  const metadataKey =
    call.state === 'output-available' || call.state === 'output-error'
      ? 'resultProviderMetadata'
      : 'callProviderMetadata';
  if (!part) {
    const created: Part = {
      type,
      ...(call.dynamic ? { toolName: call.toolName } : {}),
      toolCallId: call.toolCallId,
      state: call.state,
      title: call.title,
      ...(call.toolMetadata === undefined ? {} : { toolMetadata: call.toolMetadata }),
      input: fields.input,
      ...(fields.inputEncoding == null ? {} : { inputEncoding: fields.inputEncoding }),
      output: fields.output,
      ...(call.dynamic ? {} : { rawInput: fields.rawInput }),
      errorText: fields.errorText,
      providerExecuted: call.providerExecuted,
      preliminary: fields.preliminary,
      ...(call.providerMetadata == null ? {} : { [metadataKey]: call.providerMetadata }),
    };
    state.message.parts.push(created);
    return created;
  }
  part.state = call.state;
  if (call.dynamic) part.toolName = call.toolName;
  else part.type = type;
  Object.assign(part, {
    input: fields.input,
    output: fields.output,
    errorText: fields.errorText,
    rawInput: fields.rawInput,
    preliminary: fields.preliminary,
  });
  if (fields.inputEncoding == null) delete part.inputEncoding;
  else part.inputEncoding = fields.inputEncoding;
  if (call.title !== undefined) part.title = call.title;
  if (call.toolMetadata !== undefined) part.toolMetadata = call.toolMetadata;
  part.providerExecuted = call.providerExecuted ?? part.providerExecuted;
  if (call.providerMetadata != null) part[metadataKey] = call.providerMetadata;
  return part;
}

/** A tool call's result: its part keeps the input, takes the output or the error. */
function writeResult(
  state: Assembly,
  chunk: Extract<UIMessageChunk, { type: 'tool-output-available' | 'tool-output-error' }>,
) {
  const part = toolCall(state, chunk.toolCallId);
  if (!part) return;
  const dynamic = part.type === 'dynamic-tool';
  const available = chunk.type === 'tool-output-available';
  const call = {
    toolCallId: chunk.toolCallId,
    toolName: toolNameOf(part),
    dynamic,
    state: available ? 'output-available' : 'output-error',
    providerExecuted: chunk.providerExecuted,
    providerMetadata: chunk.providerMetadata,
    title: part.title,
    toolMetadata: chunk.toolMetadata ?? part.toolMetadata,
  };
  const fields = available
    ? { input: part.input, output: chunk.output, preliminary: chunk.preliminary }
    : { input: part.input, errorText: chunk.errorText, ...(dynamic ? {} : { rawInput: part.rawInput }) };
  writeToolPart(state, call, fields, part);
}

/** Text and reasoning: a part opened by its `-start`, grown by its deltas, closed by its `-end`. */
function addText(
  state: Assembly,
  chunk: Extract<UIMessageChunk, { type: `${'text' | 'reasoning'}-${'start' | 'delta' | 'end'}` }>,
) {
  const open = chunk.type.startsWith('text') ? state.texts : state.reasonings;
  if (chunk.type === 'text-start' || chunk.type === 'reasoning-start') {
    const part: Part =
      chunk.type === 'text-start'
        ? { type: 'text', text: '', providerMetadata: chunk.providerMetadata, state: 'streaming' }
        : { type: 'reasoning', id: chunk.id, text: '', providerMetadata: chunk.providerMetadata, state: 'streaming' };
    open.set(chunk.id, part);
    state.message.parts.push(part);
    return;
  }
  const part = open.get(chunk.id);
  if (!part) return;
  if (chunk.type === 'text-delta' || chunk.type === 'reasoning-delta') part.text += chunk.delta;
  else {
    part.state = 'done';
    if (chunk.type === 'text-end' && chunk.citations != null) part.citations = chunk.citations;
    open.delete(chunk.id);
  }
  part.providerMetadata = chunk.providerMetadata ?? part.providerMetadata;
}

/** A tool call's input: started, streamed, complete, or refused. */
function addToolInput(state: Assembly, chunk: Extract<UIMessageChunk, { type: `tool-input-${string}` }>) {
  switch (chunk.type) {
    case 'tool-input-start': {
      const dynamic = chunk.dynamic === true;
      state.partialCalls.set(chunk.toolCallId, {
        text: '',
        inputEncoding: chunk.inputEncoding,
        toolName: chunk.toolName,
        dynamic,
        title: chunk.title,
        toolMetadata: chunk.toolMetadata,
      });
      state.partialInputs.delete(
        writeToolPart(
          state,
          { ...chunk, dynamic, state: 'input-streaming' },
          { input: undefined, inputEncoding: chunk.inputEncoding },
        ),
      );
      return;
    }
    case 'tool-input-delta': {
      const call = state.partialCalls.get(chunk.toolCallId);
      if (!call) return;
      call.text += chunk.inputTextDelta;
      // The input is parsed once, when the message is read: only the last parse would show in it.
      const update = {
        toolCallId: chunk.toolCallId,
        toolName: call.toolName,
        dynamic: call.dynamic,
        state: 'input-streaming',
        title: call.title,
        toolMetadata: call.toolMetadata,
      };
      const part = writeToolPart(state, update, {
        input: undefined,
        rawInput: call.text,
        inputEncoding: call.inputEncoding,
      });
      state.partialInputs.set(part, { text: call.text, encoding: call.inputEncoding });
      return;
    }
    case 'tool-input-available': {
      const part = writeToolPart(
        state,
        { ...chunk, dynamic: chunk.dynamic === true, state: 'input-available' },
        { input: chunk.input },
      );
      state.partialInputs.delete(part);
      return;
    }
    case 'tool-input-error': {
      const existing = inStep(state, (part) => isToolPart(part) && part.toolCallId === chunk.toolCallId);
      const dynamic = existing ? existing.type === 'dynamic-tool' : chunk.dynamic === true;
      const part = writeToolPart(
        state,
        { ...chunk, title: undefined, dynamic, state: 'output-error' },
        { input: chunk.input, errorText: chunk.errorText },
      );
      state.partialInputs.delete(part);
    }
  }
}

/** An approval asked for or answered. */
function addApproval(
  state: Assembly,
  chunk: Extract<UIMessageChunk, { type: 'tool-approval-request' | 'tool-approval-response' }>,
) {
  if (chunk.type === 'tool-approval-request') {
    const part = toolCall(state, chunk.toolCallId);
    if (!part) return;
    part.state = 'approval-requested';
    part.approval = {
      id: chunk.approvalId,
      ...(chunk.approvalDescriptor == null ? {} : { descriptor: chunk.approvalDescriptor }),
      ...(Object.hasOwn(chunk, 'inputSchemaInput') ? { inputSchemaInput: chunk.inputSchemaInput } : {}),
      ...(chunk.reason == null ? {} : { requestReason: chunk.reason }),
      ...(chunk.isAutomatic === true ? { isAutomatic: true } : {}),
      ...(chunk.signature == null ? {} : { signature: chunk.signature }),
    };
    return;
  }
  const part = state.message.parts.find(
    (candidate) =>
      isToolPart(candidate) && (candidate.approval as { id?: unknown } | undefined)?.id === chunk.approvalId,
  );
  if (!part) return;
  part.state = 'approval-responded';
  part.approval = {
    ...(part.approval as object),
    id: chunk.approvalId,
    approved: chunk.approved,
    ...(chunk.reason == null ? {} : { reason: chunk.reason }),
  };
  if (chunk.providerExecuted != null) part.providerExecuted = chunk.providerExecuted;
  if (chunk.providerMetadata != null) part.callProviderMetadata = chunk.providerMetadata;
}

/** Parts added whole: files, sources, custom parts, steering messages, data parts (a known id replaced). */
function addWholePart(state: Assembly, chunk: UIMessageChunk) {
  const { parts } = state.message;
  switch (chunk.type) {
    case 'custom':
      parts.push({ type: 'custom', kind: chunk.kind, providerMetadata: chunk.providerMetadata });
      return;
    case 'file':
    case 'reasoning-file':
      parts.push({
        type: chunk.type,
        mediaType: chunk.mediaType,
        url: chunk.url,
        ...(chunk.providerMetadata == null ? {} : { providerMetadata: chunk.providerMetadata }),
      });
      return;
    case 'source-url':
      parts.push({
        type: 'source-url',
        sourceId: chunk.sourceId,
        url: chunk.url,
        title: chunk.title,
        providerMetadata: chunk.providerMetadata,
      });
      return;
    case 'source-document':
      parts.push({
        type: 'source-document',
        sourceId: chunk.sourceId,
        mediaType: chunk.mediaType,
        title: chunk.title,
        filename: chunk.filename,
        providerMetadata: chunk.providerMetadata,
      });
      return;
    case 'steering-message':
      parts.push({ type: 'steering-message', id: chunk.id, parts: chunk.parts });
      return;
    case 'start-step':
      parts.push({ type: 'step-start' });
      return;
    default: {
      if (!isDataChunk(chunk) || chunk.transient) return;
      const existing =
        chunk.id == null ? undefined : parts.find((part) => part.type === chunk.type && part.id === chunk.id);
      if (existing) existing.data = chunk.data;
      else parts.push(chunk as Part);
    }
  }
}

/** Applies one chunk. */
function add(state: Assembly, chunk: UIMessageChunk): void {
  const { message } = state;
  switch (chunk.type) {
    case 'text-start':
    case 'text-delta':
    case 'text-end':
    case 'reasoning-start':
    case 'reasoning-delta':
    case 'reasoning-end':
      return addText(state, chunk);
    case 'tool-input-start':
    case 'tool-input-delta':
    case 'tool-input-available':
    case 'tool-input-error':
      return addToolInput(state, chunk);
    case 'tool-approval-request':
    case 'tool-approval-response':
      return addApproval(state, chunk);
    case 'tool-output-denied': {
      const part = toolCall(state, chunk.toolCallId);
      if (part) part.state = 'output-denied';
      return;
    }
    case 'tool-output-available':
    case 'tool-output-error':
      return writeResult(state, chunk);
    case 'reset-step':
      state.texts.clear();
      state.reasonings.clear();
      state.partialCalls.clear();
      message.parts.length = stepStart(state);
      return;
    case 'start':
      if (chunk.messageId != null) message.id = chunk.messageId;
      if (chunk.messageMetadata != null) message.metadata = mergeMetadata(message.metadata, chunk.messageMetadata);
      return;
    case 'finish':
      if (chunk.finishReason != null) state.finishReason = chunk.finishReason;
      if (chunk.messageMetadata != null) message.metadata = mergeMetadata(message.metadata, chunk.messageMetadata);
      return;
    case 'message-metadata':
      if (chunk.messageMetadata != null) message.metadata = mergeMetadata(message.metadata, chunk.messageMetadata);
      return;
    case 'finish-step':
    case 'error':
    case 'abort':
      return;
    default:
      return addWholePart(state, chunk);
  }
}

/**
 * Assembles the assistant message a UI message stream describes, chunk by chunk, in the stage that
 * already handles each chunk: the message the AI SDK builds from the same stream for `onEnd`
 * (`toUIMessageStream`, `createUIMessageStream`) and that a `useChat` client ends up with, without
 * the SDK's extra stream stages. Continues `lastMessage` when it is an assistant message (an answer
 * resumed after an approval), else starts one with `messageId`. A chunk that refers to something the
 * stream never started (which the SDK refuses) is left out.
 */
export function createUIMessageAssembler<Message extends UIMessage>(options: {
  lastMessage?: Message | undefined;
  messageId: string;
}): UIMessageAssembler<Message> {
  const resumed =
    options.lastMessage?.role === 'assistant'
      ? (structuredClone(options.lastMessage) as unknown as Assembly['message'])
      : undefined;
  const state: Assembly = {
    message: resumed ?? { id: options.messageId, metadata: undefined, role: 'assistant', parts: [] },
    texts: new Map(),
    reasonings: new Map(),
    partialCalls: new Map(),
    partialInputs: new Map(),
    finishReason: undefined,
  };
  // A resumed answer may end in a call whose input was still streaming.
  for (const part of state.message.parts.slice(stepStart(state))) {
    if (!isToolPart(part) || part.state !== 'input-streaming') continue;
    state.partialCalls.set(part.toolCallId as string, {
      text: (part.rawInput as string | undefined) ?? '',
      inputEncoding: part.inputEncoding as PartialToolCall['inputEncoding'],
      toolName: toolNameOf(part),
      dynamic: part.type === 'dynamic-tool',
      title: part.title,
      toolMetadata: part.toolMetadata,
    });
  }
  return {
    add: (chunk) => add(state, chunk),
    get finishReason() {
      return state.finishReason;
    },
    async message() {
      // Calls whose input streamed and was not given whole since: their input as far as it parses.
      for (const part of state.message.parts) {
        const partial = state.partialInputs.get(part);
        if (partial)
          part.input = partial.encoding === 'text' ? partial.text : (await parsePartialJson(partial.text)).value;
      }
      return state.message as unknown as Message;
    },
  };
}
