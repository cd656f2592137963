import type { AuditEvent } from '../audit/audit-store.js';
import { builtinCapabilities, type CapabilityRegistry } from '../capabilities/capabilities.js';

/**
 * A project's policy: for each role, the capability flags it grants (`canRefundOrders: true`) or
 * withholds. A flag a role does not name takes its least-privilege default — read capabilities on,
 * write capabilities off — and a role the policy does not name gets only those defaults.
 */
export interface RolePolicy {
  roles: Record<string, Record<string, boolean>>;
}

/** A project's stored policy, with the version each change checks and who made the last one. */
export interface StoredRolePolicy extends RolePolicy {
  projectKey: string;
  /** 1 for the first stored policy, bumped by each change. */
  version: number;
  /** Epoch milliseconds. */
  updatedAt: number;
  /** The email of the admin who made the last change. */
  updatedBy: string | null;
}

/**
 * The built-in policy, what a project has until its admins change it: admins may refund, cancel and
 * work tickets, agents work tickets, viewers only read.
 */
export const defaultRolePolicy: RolePolicy = Object.freeze({
  roles: Object.freeze({
    admin: Object.freeze({
      canRefundOrders: true,
      canCancelOrders: true,
      canCreateTickets: true,
      canUpdateTickets: true,
    }),
    agent: Object.freeze({ canCreateTickets: true, canUpdateTickets: true }),
    viewer: Object.freeze({}),
  }),
}) as RolePolicy;

/** Every flag of `registry` for `role` under `policy`: what the role names, else the flag's least-privilege default. */
export function capabilitiesOf(
  policy: RolePolicy,
  role: string,
  registry: CapabilityRegistry = builtinCapabilities,
): Record<string, boolean> {
  const granted = Object.hasOwn(policy.roles, role) ? policy.roles[role]! : {};
  return Object.fromEntries(
    Object.entries(registry).map(([name, { kind }]) => [
      name,
      Object.hasOwn(granted, name) ? granted[name] === true : kind === 'read',
    ]),
  );
}

/** Why a policy cannot be stored (a role or flag nobody knows), or null when it can. */
export function rolePolicyProblem(
  policy: RolePolicy,
  roles: readonly string[],
  registry: CapabilityRegistry = builtinCapabilities,
): { path: string; message: string } | null {
  for (const [role, flags] of Object.entries(policy.roles)) {
    if (!roles.includes(role)) return { path: `roles.${role}`, message: 'Not a role of this service' };
    for (const [flag, value] of Object.entries(flags)) {
      if (!Object.hasOwn(registry, flag)) return { path: `roles.${role}.${flag}`, message: 'Not a capability' };
      if (typeof value !== 'boolean') return { path: `roles.${role}.${flag}`, message: 'Must be true or false' };
    }
  }
  return null;
}

/**
 * Storage port for the role policies of projects: data in, data out. Run `testRolePolicyStore` from
 * `@deskpilot/core/testing` against an implementation.
 */
export interface RolePolicyStore {
  /**
   * True when `set` appends the `audit` event it is given in its own transaction, to the audit trail
   * of the same database (the Postgres and SQLite stores).
   */
  readonly appendsAudit?: boolean;
  /** A project's stored policy, or null (it has the built-in one). */
  get(projectKey: string): Promise<StoredRolePolicy | null>;
  /**
   * Stores a project's policy while its version is still `expectedVersion` (0: none stored yet); the
   * stored policy, or null when another change came first. With `audit` and a store that
   * `appendsAudit`, the event (built from the policy before) lands in the same transaction.
   */
  set(
    projectKey: string,
    policy: RolePolicy,
    change: { expectedVersion: number; updatedAt: number; updatedBy: string | null },
    audit?: (before: StoredRolePolicy | null) => AuditEvent,
  ): Promise<StoredRolePolicy | null>;
}

/**
 * Creates a {@link RolePolicyStore} in process memory.
 *
 * @example
 * const policies = createMemoryRolePolicyStore();
 */
export function createMemoryRolePolicyStore(): RolePolicyStore {
  const stored = new Map<string, StoredRolePolicy>();
  return {
    async get(projectKey) {
      const policy = stored.get(projectKey);
      return policy ? structuredClone(policy) : null;
    },
    async set(projectKey, policy, change) {
      const before = stored.get(projectKey) ?? null;
      if ((before?.version ?? 0) !== change.expectedVersion) return null;
      const next: StoredRolePolicy = {
        projectKey,
        roles: structuredClone(policy.roles),
        version: change.expectedVersion + 1,
        updatedAt: change.updatedAt,
        updatedBy: change.updatedBy,
      };
      stored.set(projectKey, next);
      return structuredClone(next);
    },
  };
}
