import { testApprovalStore } from '../../testing/test-approval-store.js';
import { createMemoryApprovalStore } from './memory-approval-store.js';

testApprovalStore(() => createMemoryApprovalStore());
