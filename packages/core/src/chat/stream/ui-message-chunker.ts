import {
  toUIMessageChunk,
  type FinishReason,
  type TextStreamPart,
  type ToolSet,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';
import { createUIMessageAssembler } from './assemble-ui-message.js';

/** Options of {@link createUIMessageChunker}: those of `toUIMessageStream` that the chat uses. */
export interface UIMessageChunkerOptions<Message extends UIMessage> {
  /** The conversation so far: when it ends with an assistant message, the answer continues it. */
  originalMessages: readonly Message[];
  /** Id of a new answer. */
  messageId: string;
  /** Metadata for a part (sent on `start` and `finish`). */
  messageMetadata?: (options: { part: TextStreamPart<ToolSet> }) => Message['metadata'] | undefined;
  /** The text an error part (or a failed tool) shows the client. */
  onError: (error: unknown) => string;
  /** What an approval request carries for the person who decides (its `approvalDescriptor`), by tool call id. */
  approvalDescriptorOf?: ((toolCallId: string) => unknown) | undefined;
}

/** The loop's parts as UI message chunks, with the answer they add up to. */
export interface UIMessageChunker<Message extends UIMessage> {
  /** Converts one part: the chunks it stands for go to `send` (a part may stand for none). */
  translate(part: TextStreamPart<ToolSet>, send: (chunk: UIMessageChunk) => void): void;
  /** The answer so far (the continued message when there is one). */
  message(): Promise<Message>;
  readonly finishReason: FinishReason | undefined;
  /** Whether an `abort` part went by. */
  readonly isAborted: boolean;
}

/**
 * `toUIMessageStream` with `onEnd`, as a function called per part instead of stream stages: the same
 * chunks (each part through the SDK's own `toUIMessageChunk`; a call with invalid input is one
 * `tool-input-error`, its `tool-error` left out) and the same response message, assembled as the
 * chunks go by. The host calls it from the one stage that already writes the SSE.
 */
export function createUIMessageChunker<Message extends UIMessage>(
  options: UIMessageChunkerOptions<Message>,
): UIMessageChunker<Message> {
  const last = options.originalMessages.at(-1);
  const lastMessage = last?.role === 'assistant' ? last : undefined;
  const messageId = lastMessage?.id ?? options.messageId;
  const assembler = createUIMessageAssembler<Message>({ lastMessage, messageId });
  const invalidCalls = new Set<string>();
  let isAborted = false;
  return {
    translate(part, send) {
      if (part.type === 'tool-call' && part.invalid) invalidCalls.add(part.toolCallId);
      const metadata = options.messageMetadata?.({ part });
      if (part.type === 'abort') isAborted = true;
      if (part.type === 'tool-error' && !part.providerExecuted && invalidCalls.delete(part.toolCallId)) return;
      let chunk = toUIMessageChunk<ToolSet, Message>(part, {
        onError: options.onError,
        messageMetadata: metadata as never,
        responseMessageId: messageId,
      }) as UIMessageChunk | undefined;
      if (chunk?.type === 'tool-approval-request') {
        const descriptor = options.approvalDescriptorOf?.(chunk.toolCallId);
        if (descriptor !== undefined) chunk = { ...chunk, approvalDescriptor: descriptor };
      }
      const emit = (next: UIMessageChunk) => {
        assembler.add(next);
        send(next);
      };
      if (chunk && part.type !== 'finish-step') emit(chunk);
      if (metadata != null && part.type !== 'start' && part.type !== 'finish')
        emit({ type: 'message-metadata', messageMetadata: metadata });
      if (chunk && part.type === 'finish-step') emit(chunk);
    },
    message: () => assembler.message(),
    get finishReason() {
      return assembler.finishReason;
    },
    get isAborted() {
      return isAborted;
    },
  };
}
