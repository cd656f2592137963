export { sessionRouter } from './session-router.js';
export { requireSession, getSession } from './require-session.js';
export { createIdentityProxy, type IdentityProxyOptions } from './create-identity-proxy.js';
export { createSessionRoutesProxy, type SessionRoutesProxyOptions } from './create-session-routes-proxy.js';
