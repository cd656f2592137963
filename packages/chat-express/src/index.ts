export { chatRouter, expressHost, type ExpressChatHost } from './chat-router.js';
