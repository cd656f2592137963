import { createMemoryUserDirectory } from '../session/memory-user-directory.js';
import { testInvitationStore } from '../testing/test-invitation-store.js';
import { testTeamDirectory } from '../testing/test-team-directory.js';
import { createMemoryInvitationStore } from './invitation-store.js';
import { createMemoryRolePolicyStore } from './role-policy.js';
import { createMemoryOrganizationStore } from './organization-store.js';
import { testOrganizationStore } from '../testing/test-organization-store.js';
import { testRolePolicyStore } from '../testing/test-role-policy-store.js';

testTeamDirectory(() => ({ directory: createMemoryUserDirectory() }));
testInvitationStore(() => createMemoryInvitationStore());
testRolePolicyStore(() => ({ store: createMemoryRolePolicyStore() }));
testOrganizationStore(() => createMemoryOrganizationStore());
