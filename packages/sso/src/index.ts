// @deskpilot/sso: OpenID Connect single sign-on (on `openid-client`) as a module of the Deskpilot
// session service, with the store of the identity links it keeps (`IdentityLinkStore`): in memory here,
// on Postgres or PGlite in `/postgres`, on SQLite in `/sqlite`, each with the module's schema; the
// conformance suite in `/testing`.
export { createSsoModule, type SsoModuleOptions } from './create-sso-module.js';
export type { SessionSso, SingleSignOn, SingleSignOnOptions, SsoProvider, SsoRefusal } from './single-sign-on.js';
export { ssoRoutes } from './sso-api.js';
export { ssoConnectionRoutes } from './connections/connection-api.js';
export type { SsoConnectionsOptions } from './connections/connection-routes.js';
export type { SsoEvent } from './sso-event.js';
export {
  createMemorySsoConnectionStore,
  secretContext,
  type SsoConnectionCreateResult,
  type SsoConnectionRecord,
  type SsoConnectionReplaceResult,
  type SsoConnectionSettings,
  type SsoConnectionStore,
} from './connections/sso-connection-store.js';
export {
  createSecretBox,
  resealConnectionSecrets,
  type SecretBox,
  type SecretBoxKey,
} from './connections/secret-box.js';
export { createMemoryIdentityLinkStore, type IdentityLink, type IdentityLinkStore } from './identity-link-store.js';
