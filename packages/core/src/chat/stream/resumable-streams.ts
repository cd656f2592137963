/** Where a running answer's bytes go, as they are sent: closed once the answer ended. */
export interface StreamRecording {
  write(bytes: Uint8Array): void;
  /** The answer ended (its own `finish` and `[DONE]` written): readers get every byte, then their stream ends. */
  close(): void;
  /**
   * The answer ended without its own end (the turn failed before it streamed): readers get an `error`
   * part, never a stream that just stops. Without it, `close` is called.
   */
  fail?(): void;
}

/** Options of {@link ResumableStreams.resume}. */
export interface ResumeOptions {
  /**
   * Told when the answer's producer is found gone (its process died, its lease in the store expired):
   * the turn it ran is to be recorded `aborted`. Called at most once per turn, on one replica.
   */
  onAbandoned?(turnId: string): void;
}

/**
 * Port of resumable answers: the stream of a running turn is recorded under its conversation's id, so
 * that a reloaded page or a second tab can re-attach (`GET /chat/:sessionId/stream`) and receive it
 * from its first byte, then live — exactly the bytes the first client got, or an `error` part where
 * they can no longer be given (never a `finish` over a hole). `createMemoryResumableStreams` serves
 * one process; `createRedisResumableStreams` (`@deskpilot/redis`) every replica.
 */
export interface ResumableStreams {
  /**
   * Starts recording a turn of conversation `key` (a later turn of the same conversation takes its
   * place); `turnId` names the turn, for {@link ResumeOptions.onAbandoned}.
   */
  record(key: string, turn?: { turnId: string }): Promise<StreamRecording>;
  /** The running answer of `key`, from its first byte, then live until it ends; null when none runs. */
  resume(key: string, options?: ResumeOptions): Promise<ReadableStream<Uint8Array> | null>;
  /**
   * Optional, for a store that outlives processes: the running answers whose producer is gone (its
   * lease expired), each ended here so that no other call reports it again.
   */
  reapAbandoned?(): Promise<Array<{ key: string; turnId: string }>>;
}

/**
 * What a reader is sent where an answer cannot be followed to its end (the recording overflowed, its
 * producer died, a piece of it is missing): an AI SDK UI message stream `error` part — `useChat` then
 * shows an error, never an answer that silently lacks words.
 */
export function resumedStreamError(errorText: string): Uint8Array {
  return new TextEncoder().encode(`data: ${JSON.stringify({ type: 'error', errorText })}\n\n`);
}

/** What the reader of an answer that outgrew the recording is told. */
export const resumeOverflowText =
  'This answer is too long to follow from here: reload the conversation once it has ended.';

/** Options of {@link createMemoryResumableStreams}. */
export interface MemoryResumableStreamsOptions {
  /**
   * Bytes kept per running answer. Past it the answer is no longer resumable: later reconnects get
   * nothing (204), pages already re-attached get an `error` part, and the answer itself goes on. What a
   * running answer holds is its bytes, in a few blocks that grow with it (what they leave unused is at
   * most 4 KiB or what they hold).
   * @default 1048576 (1 MiB)
   */
  maxBytes?: number;
}

/** The first block of a recording; each next one is as large as what is recorded so far, up to the last size. */
const firstBlockBytes = 4 * 1024;
const largestBlockBytes = 64 * 1024;

/**
 * A running answer's bytes, copied into a few blocks as they are written: one buffer per SSE event
 * (thousands in a long answer, each with its own backing store) would outlive its write and cost
 * several times the bytes it holds.
 */
interface Recording {
  /** The blocks filled before the current one, each cut to what it holds. */
  filled: Uint8Array[];
  block: Uint8Array | undefined;
  /** Bytes of `block` in use. */
  used: number;
  bytes: number;
  listeners: Set<ReadableStreamDefaultController<Uint8Array>>;
}

/** Copies `bytes` to the end of `recording`, starting a block when the current one is full. */
function append(recording: Recording, bytes: Uint8Array): void {
  let block = recording.block;
  if (!block || recording.used + bytes.byteLength > block.byteLength) {
    if (block) recording.filled.push(block.subarray(0, recording.used));
    const size = Math.min(largestBlockBytes, Math.max(firstBlockBytes, recording.bytes));
    block = recording.block = new Uint8Array(Math.max(size, bytes.byteLength));
    recording.used = 0;
  }
  block.set(bytes, recording.used);
  recording.used += bytes.byteLength;
}

/** What is recorded so far, as views of its blocks (shared by every reader: a block is only ever appended to). */
function recorded(recording: Recording): Uint8Array[] {
  const current = recording.block?.subarray(0, recording.used);
  return current && current.byteLength > 0 ? [...recording.filled, current] : [...recording.filled];
}

/**
 * Resumable answers in process memory: each running answer's bytes (at most `maxBytes`), dropped
 * when it ends — a page that reconnects after the end reads the stored conversation instead.
 *
 * @example
 * const chat = createChatHandler({ ...options, resumableStreams: createMemoryResumableStreams() });
 */
export function createMemoryResumableStreams(options: MemoryResumableStreamsOptions = {}): ResumableStreams {
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const running = new Map<string, Recording>();
  /**
   * Ends a recording: its listeners' streams close (after an `error` part when it could not be given
   * whole), and it is forgotten if still the latest.
   */
  const finish = (key: string, recording: Recording, error?: string) => {
    for (const listener of recording.listeners) {
      try {
        if (error !== undefined) listener.enqueue(resumedStreamError(error));
        listener.close();
      } catch {
        // The listener went away meanwhile.
      }
    }
    recording.listeners.clear();
    recording.filled = [];
    recording.block = undefined;
    if (running.get(key) === recording) running.delete(key);
  };
  return {
    async record(key) {
      const recording: Recording = { filled: [], block: undefined, used: 0, bytes: 0, listeners: new Set() };
      const previous = running.get(key);
      if (previous) finish(key, previous);
      running.set(key, recording);
      let open = true;
      return {
        write(bytes) {
          if (!open) return;
          if (recording.bytes + bytes.byteLength > maxBytes) {
            open = false;
            return finish(key, recording, resumeOverflowText);
          }
          append(recording, bytes);
          recording.bytes += bytes.byteLength;
          for (const listener of recording.listeners) listener.enqueue(bytes);
        },
        close() {
          if (!open) return;
          open = false;
          finish(key, recording);
        },
        fail() {
          if (!open) return;
          open = false;
          finish(key, recording, 'This answer stopped before its end.');
        },
      };
    },
    async resume(key) {
      const recording = running.get(key);
      if (!recording) return null;
      let self: ReadableStreamDefaultController<Uint8Array> | undefined;
      return new ReadableStream<Uint8Array>({
        start(controller) {
          self = controller;
          for (const part of recorded(recording)) controller.enqueue(part);
          recording.listeners.add(controller);
        },
        cancel() {
          if (self) recording.listeners.delete(self);
        },
      });
    },
  };
}
