// @deskpilot/scim: SCIM 2.0 provisioning and deprovisioning as a module of the Deskpilot session
// service, with the store of the directories it keeps (`ScimStore`): in memory here, on Postgres or
// PGlite in `/postgres`, on SQLite in `/sqlite`, each with the module's schema; the conformance suite in
// `/testing`.
export { createScimModule, type ScimModule, type ScimModuleOptions } from './create-scim-module.js';
export type { GroupRole, ScimDirectoryOptions } from './scim-directory.js';
export type { ScimHandlerOptions } from './scim-handler.js';
export { scimRoutes } from './scim-api.js';
export {
  createMemoryScimStore,
  type ScimAttributes,
  type ScimGroupCreateResult,
  type ScimGroupRecord,
  type ScimListQuery,
  type ScimMember,
  type ScimMembersResult,
  type ScimPage,
  type ScimReplaceResult,
  type ScimStore,
  type ScimTokenRecord,
  type ScimUserCreateResult,
  type ScimUserRecord,
} from './scim-store.js';
