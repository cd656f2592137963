// @deskpilot/magic-link/routes: the module's routes as declared, light (no WebAuthn or OpenID library, no
// handler): what a typed client derives its calls from (`client.routes(magicLinkRoutes)` of @deskpilot/client).
export { magicLinkRoutes } from './magic-link-api.js';
