export * from './errors/index.js';
export * from './http/index.js';
export * from './limiter/index.js';
export * from './session/index.js';
export { parseWithSchema, safeParseWithSchema, type SafeParseResult } from './validation/parse-with-schema.js';
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
