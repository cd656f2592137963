/** Where a running answer's bytes go, as they are sent: closed once the answer ended. */
export interface StreamRecording {
  write(bytes: Uint8Array): void;
  close(): void;
}

/**
 * Port of resumable answers: the stream of a running turn is recorded under its conversation's id, so
 * that a reloaded page or a second tab can re-attach (`GET /chat/:sessionId/stream`) and receive it
 * from its first byte, then live. `createMemoryResumableStreams` serves one process;
 * `createRedisResumableStreams` (`@deskpilot/redis`) every replica.
 */
export interface ResumableStreams {
  /** Starts recording a turn of conversation `key` (a later turn of the same conversation takes its place). */
  record(key: string): Promise<StreamRecording>;
  /** The running answer of `key`, from its first byte, then live until it ends; null when none runs. */
  resume(key: string): Promise<ReadableStream<Uint8Array> | null>;
}

/** Options of {@link createMemoryResumableStreams}. */
export interface MemoryResumableStreamsOptions {
  /**
   * Bytes kept per running answer. Past it the answer is no longer resumable: later reconnects get
   * nothing (204), pages already re-attached see their stream end, and the answer itself goes on.
   * @default 1048576 (1 MiB)
   */
  maxBytes?: number;
}

interface Recording {
  chunks: Uint8Array[];
  bytes: number;
  listeners: Set<ReadableStreamDefaultController<Uint8Array>>;
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
  /** Ends a recording: its listeners' streams close, and it is forgotten if still the latest. */
  const finish = (key: string, recording: Recording) => {
    for (const listener of recording.listeners) {
      try {
        listener.close();
      } catch {
        // The listener went away meanwhile.
      }
    }
    recording.listeners.clear();
    recording.chunks = [];
    if (running.get(key) === recording) running.delete(key);
  };
  return {
    async record(key) {
      const recording: Recording = { chunks: [], bytes: 0, listeners: new Set() };
      const previous = running.get(key);
      if (previous) finish(key, previous);
      running.set(key, recording);
      let open = true;
      return {
        write(bytes) {
          if (!open) return;
          recording.bytes += bytes.byteLength;
          if (recording.bytes > maxBytes) {
            open = false;
            return finish(key, recording);
          }
          recording.chunks.push(bytes);
          for (const listener of recording.listeners) listener.enqueue(bytes);
        },
        close() {
          if (!open) return;
          open = false;
          finish(key, recording);
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
          for (const chunk of recording.chunks) controller.enqueue(chunk);
          recording.listeners.add(controller);
        },
        cancel() {
          if (self) recording.listeners.delete(self);
        },
      });
    },
  };
}
