export { type ChatLimits } from './chat-request.js';
export { createChatHandler, type ChatHandler, type ChatHandlerOptions, type ChatModel, type ChatModels } from './create-chat-handler.js';
