import { createMemoryApprovalStore } from '../chat/approval/memory-approval-store.js';
import { createMemoryChatStore } from '../chat/conversation/memory-chat-store.js';
import { createMemorySessionStore } from '../session/memory-session-store.js';
import { createMemoryUserDirectory } from '../session/memory-user-directory.js';
import { testPasswordHash } from '../session/session.test-support.js';
import { testInputConformance } from './test-input-conformance.js';

// The memory stores are the reference the SQL stores are held to: they must pass the same property.
testInputConformance({
  chatStore: createMemoryChatStore,
  approvalStore: createMemoryApprovalStore,
  sessionStore: createMemorySessionStore,
  userDirectory: () => createMemoryUserDirectory({ passwordHash: testPasswordHash }),
});
