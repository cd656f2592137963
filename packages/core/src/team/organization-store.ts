/**
 * Storage port for organisations: projects grouped under one key, with admins of their own who
 * administer every project of it (members, roles, invitations, sessions, policy, audit trail) without
 * being a member of each. Data in, data out. Run `testOrganizationStore` from `@deskpilot/core/testing`
 * against an implementation.
 */
export interface OrganizationStore {
  /** The organisation a project belongs to, or null. */
  organizationOf(projectKey: string): Promise<string | null>;
  /** The projects of an organisation, in key order. */
  projects(organization: string): Promise<string[]>;
  /** The organisations a user administers, in key order. */
  administeredBy(userId: string): Promise<string[]>;
  /** Puts a project in an organisation (a project belongs to one: it leaves any other). */
  addProject(organization: string, projectKey: string): Promise<void>;
  /** Makes a user an admin of an organisation (`true`), or no longer (`false`). */
  setAdmin(organization: string, userId: string, admin: boolean): Promise<void>;
  /** The user ids of an organisation's admins, in key order. */
  admins(organization: string): Promise<string[]>;
  /**
   * Makes a user an admin of an organisation no longer, atomically refusing to remove its last one
   * (two admins removing each other at once: one of them stays).
   */
  removeAdmin(organization: string, userId: string): Promise<'removed' | 'not_admin' | 'last_admin'>;
}

const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Creates an {@link OrganizationStore} in process memory.
 *
 * @example
 * const organizations = createMemoryOrganizationStore();
 * await organizations.addProject('acme', 'acme-b2c');
 * await organizations.setAdmin('acme', leadUserId, true);
 */
export function createMemoryOrganizationStore(): OrganizationStore {
  const projectOrganization = new Map<string, string>();
  const admins = new Map<string, Set<string>>();
  return {
    organizationOf: async (projectKey) => projectOrganization.get(projectKey) ?? null,
    projects: async (organization) =>
      [...projectOrganization]
        .filter(([, owner]) => owner === organization)
        .map(([key]) => key)
        .sort(byKey),
    administeredBy: async (userId) =>
      [...admins]
        .filter(([, users]) => users.has(userId))
        .map(([organization]) => organization)
        .sort(byKey),
    async addProject(organization, projectKey) {
      projectOrganization.set(projectKey, organization);
    },
    async setAdmin(organization, userId, admin) {
      const users = admins.get(organization) ?? new Set<string>();
      if (admin) users.add(userId);
      else users.delete(userId);
      admins.set(organization, users);
    },
    admins: async (organization) => [...(admins.get(organization) ?? [])].sort(byKey),
    async removeAdmin(organization, userId) {
      const users = admins.get(organization);
      if (!users?.has(userId)) return 'not_admin';
      if (users.size === 1) return 'last_admin';
      users.delete(userId);
      return 'removed';
    },
  };
}
