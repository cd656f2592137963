export * from './errors/index.js';
export { consoleLogger, type Logger } from './logging/logger.js';
export * from './http/index.js';
export * from './limiter/index.js';
export * from './session/index.js';
export { formatFieldPath, parseWithSchema, safeParseWithSchema, type SafeParseResult } from './validation/parse-with-schema.js';
export { isValidText, textProblem, validText } from './validation/valid-text.js';
export {
  checkJsonValue,
  jsonValueSchema,
  type CheckJsonValueOptions,
  type JsonValue,
  type JsonValueProblem,
  type JsonValueSchemaOptions,
} from './validation/check-json-value.js';
export {
  defaultDeniedHeaders,
  downstreamHeaders,
  endToEndHeaders,
  identityHeaderNames,
  isIdentityHeader,
  stampIdentityHeaders,
  type IdentityHeaderOptions,
  type IncomingHeaders,
} from './proxy/identity-headers.js';
export { fetchSession, type FetchSessionOptions } from './proxy/fetch-session.js';
export * from './chat/index.js';
