export {
  createAccountRecovery,
  type AccountRecovery,
  type AccountRecoveryDependencies,
  type AccountRecoveryOptions,
  type PasswordResetRequestOutcome,
  type PasswordResetResult,
  type VerifyEmailResult,
} from './account-recovery.js';
export { createRecoveryModule, type RecoveryModuleOptions } from './create-recovery-module.js';
