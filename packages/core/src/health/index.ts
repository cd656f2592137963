export {
  createReadinessCheck,
  healthResponse,
  readinessResponse,
  type ReadinessCheck,
  type ReadinessCheckEntry,
  type ReadinessCheckOptions,
  type ReadinessCheckResult,
  type ReadinessProbe,
} from './create-readiness-check.js';
