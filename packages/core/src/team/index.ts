export { createTeamModule, type SessionTeam } from './create-team-module.js';
export {
  createTeamAdmin,
  type InvitationSummary,
  type TeamAdmin,
  type TeamCaller,
  type TeamDependencies,
  type TeamOptions,
  type TeamRefusal,
  type TeamResult,
} from './create-team-admin.js';
export { createMemoryInvitationStore, type InvitationRecord, type InvitationStore } from './invitation-store.js';
export {
  applyMembershipChange,
  type MembershipChange,
  type MembershipChangeResult,
  type NewAccount,
  type ProjectMember,
  type TeamDirectory,
} from '../session/team-directory.js';
export {
  capabilitiesOf,
  createMemoryRolePolicyStore,
  defaultRolePolicy,
  rolePolicyProblem,
  type RolePolicy,
  type RolePolicyStore,
  type StoredRolePolicy,
} from './role-policy.js';
export { createMemoryOrganizationStore, type OrganizationStore } from './organization-store.js';
export {
  recordOrganizationChange,
  type OrganizationAdmins,
  type OrganizationCaller,
  type OrganizationChange,
  type OrganizationRefusal,
  type OrganizationResult,
} from './organization-admins.js';
