// @deskpilot/sso/routes: the module's routes as declared, light (no WebAuthn or OpenID library, no
// handler): what a typed client derives its calls from (`client.routes(ssoRoutes)` of @deskpilot/client).
export { ssoRoutes } from './sso-api.js';
export { ssoConnectionRoutes } from './connections/connection-api.js';
