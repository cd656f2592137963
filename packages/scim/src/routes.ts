// @deskpilot/scim/routes: the module's admin routes as declared, light (no handler): what a typed
// client derives its calls from (`client.routes(scimRoutes)` of @deskpilot/client).
export { scimRoutes } from './scim-api.js';
