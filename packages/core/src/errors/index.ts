export {
  DeskpilotError,
  errorStatus,
  errorTitle,
  isDeskpilotError,
  type DeskpilotErrorOptions,
  type ErrorCode,
  type FieldError,
  type ProblemBudget,
} from './deskpilot-error.js';
export { problemContentType, toProblemDetails, type ProblemDetails } from './problem-details.js';
export { describeError } from './describe-error.js';
