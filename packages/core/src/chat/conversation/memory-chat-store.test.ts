import { testChatStore } from '../../testing/test-chat-store.js';
import { createMemoryChatStore } from './memory-chat-store.js';

testChatStore(() => createMemoryChatStore());
