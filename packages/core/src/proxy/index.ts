export {
  defaultDeniedHeaders,
  downstreamHeaders,
  endToEndHeaders,
  identityHeaderNames,
  isIdentityHeader,
  stampIdentityHeaders,
  type IdentityHeaderOptions,
  type IncomingHeaders,
} from './identity-headers.js';
export { fetchCapabilities, fetchSession, type FetchSessionOptions } from './fetch-session.js';
export { forwardRequest, type ForwardRequestOptions } from './forward-request.js';
export { forwardedFor, type ForwardedForOptions } from './forwarded-for.js';
export {
  createIdentityForwarder,
  type IdentityForwarder,
  type IdentityForwarderOptions,
  type IdentityForwardTarget,
} from './create-identity-forwarder.js';
export {
  createSessionRoutesForwarder,
  type SessionRoutesForwarder,
  type SessionRoutesForwarderOptions,
  type SessionRoutesForwardTarget,
} from './create-session-routes-forwarder.js';
