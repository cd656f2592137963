export { readChatStream } from './read-chat-stream.js';
