export { createStepUpModule } from './create-step-up-module.js';
export {
  passkeysBefore,
  type ProviderSignIn,
  type SessionStepUp,
  type StepUpAnswer,
  type StepUpChallenge,
  type StepUpOptions,
  type StepUpPasskeys,
  type StepUpProvider,
  type StepUpResult,
} from './session-step-up.js';
export {
  signStepUpProof,
  stepUpBinding,
  stepUpBindingPattern,
  verifyStepUpProof,
  type SignStepUpProofOptions,
  type StepUpAtProvider,
  type StepUpMethod,
  type StepUpProof,
  type VerifyStepUpProofOptions,
} from './step-up-proof.js';
