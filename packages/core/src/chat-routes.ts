// `@deskpilot/core/chat-routes`: the chat service's routes as declared, their schemas on classic zod
// (the chat's message schemas): light otherwise — no handler, no store, no Node built-in.
export { chatRoutes } from './chat/handler/chat-api.js';
