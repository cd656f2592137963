export { chatRouter, type ChatRouterOptions } from './chat-router.js';
