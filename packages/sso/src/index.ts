// @deskpilot/sso: OpenID Connect single sign-on (on `openid-client`) as a module of the Deskpilot
// session service. The identity links it keeps (`IdentityLinkStore`) stay in core, beside the user
// directory that every SQL package implements.
export { createSsoModule, type SsoModuleOptions } from './create-sso-module.js';
export type { SessionSso, SingleSignOn, SingleSignOnOptions, SsoProvider, SsoRefusal } from './single-sign-on.js';
export { ssoRoutes } from './sso-api.js';
