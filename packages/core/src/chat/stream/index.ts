export { readChatStream } from './read-chat-stream.js';
export {
  createMemoryResumableStreams,
  type MemoryResumableStreamsOptions,
  type ResumableStreams,
  type StreamRecording,
} from './resumable-streams.js';
