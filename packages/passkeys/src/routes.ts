// @deskpilot/passkeys/routes: the module's routes as declared, light (no WebAuthn or OpenID library, no
// handler): what a typed client derives its calls from (`client.routes(passkeyRoutes)` of @deskpilot/client).
export { passkeyRoutes } from './passkey-api.js';
