export { readChatStream } from './read-chat-stream.js';
export {
  createMemoryResumableStreams,
  resumedStreamError,
  type MemoryResumableStreamsOptions,
  type ResumableStreams,
  type ResumeOptions,
  type StreamRecording,
} from './resumable-streams.js';
