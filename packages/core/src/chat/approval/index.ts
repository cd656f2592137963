export type {
  ApprovalDecision,
  ApprovalOutcome,
  ApprovalRecord,
  ApprovalState,
  ApprovalStepUp,
  ApprovalStore,
} from './approval-store.js';
export { createMemoryApprovalStore, type MemoryApprovalStore } from './memory-approval-store.js';
export { canonicalHash, canonicalJson } from '../../encoding/canonical-hash.js';
export {
  createApprovalGate,
  type ApprovalAnswer,
  type ApprovalDenialReason,
  type ApprovalGate,
  type ApprovalGateOptions,
  type ApprovalDecided,
  type ApprovalReview,
  type ApprovalScope,
} from './create-approval-gate.js';
export {
  createStepUpVerifier,
  stepUpPolicy,
  type ChatStepUpOptions,
  type StepUpCall,
  type StepUpPolicy,
  type StepUpRefusal,
  type StepUpRequest,
  type StepUpRule,
  type StepUpVerifier,
  type StepUpVerifierOptions,
} from './step-up.js';
