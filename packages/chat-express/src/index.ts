export { chatRouter } from './chat-router.js';
