import type { AuditEvent } from '../audit/audit-store.js';
import type { Account, Membership, User } from './user-directory.js';

/** A member of one project: the user, and their memberships there (one per client). */
export interface ProjectMember {
  user: User;
  memberships: Membership[];
}

/** A new account as {@link TeamDirectory.createUser} adds it. */
export interface NewAccount {
  /** Normalised. */
  email: string;
  name: string;
  /** A hash from `hashPassword`. */
  passwordHash: string;
  emailVerified: boolean;
  memberships: Membership[];
}

/**
 * A change to one user's place in one project: `role` set on every membership they have there (a
 * user with none gets one for `clientId` when given, else the change is `not_member`), or `remove`
 * ending them all. `keepRole` is the team rule the store enforces atomically: a change that takes the
 * role from the last member holding it (its last admin) is refused.
 */
export type MembershipChange = {
  userId: string;
  projectKey: string;
  keepRole?: string | undefined;
  /** Only add: a user who has a membership there already is `already_member`, and nothing changes. */
  addOnly?: boolean | undefined;
} & (
  | { role: string; clientId?: string | undefined; remove?: undefined }
  | { remove: true; role?: undefined; clientId?: undefined }
);

/** Outcome of {@link TeamDirectory.changeMembership}: the memberships before, or why nothing changed. */
export type MembershipChangeResult =
  | {
      ok: true;
      /** The user's memberships in the project before the change (empty: it added them). */
      before: Membership[];
      /** True when the store appended the audit event in the change's own transaction. */
      audited: boolean;
    }
  | { ok: false; reason: 'no_user' | 'not_member' | 'last_role_holder' | 'already_member' };

/**
 * Storage port for a team's memberships, beside {@link UserDirectory} (the shipped directories
 * implement both). Data in, data out: core decides who may change what; the store makes each change
 * atomic, including the "keep one admin" rule, which a check-then-write in core could not keep
 * between two admins demoting each other at once. Run `testTeamDirectory` from
 * `@deskpilot/core/testing` against an implementation.
 */
export interface TeamDirectory {
  /** Everyone with a membership in `projectKey`, ordered by email. */
  listMembers(projectKey: string): Promise<ProjectMember[]>;
  /** The user with this (normalised) email, or null. */
  findUserByEmail(email: string): Promise<User | null>;
  /**
   * Adds a user with a password hash and memberships, only while nobody has that (normalised) email:
   * the new account, or null when the address is taken (never replaces anyone, unlike `addUser`).
   */
  createUser(user: NewAccount): Promise<Account | null>;
  /**
   * Applies one change atomically. Given `audit` (the event, from the memberships before the change),
   * a store whose audit trail lives in the same database appends it in the same transaction (and answers `audited: true`); any other store leaves it to
   * the caller. Input no row can hold (NUL, a lone surrogate) is `no_user` or `not_member`, never an error.
   */
  changeMembership(
    change: MembershipChange,
    audit?: (before: Membership[]) => AuditEvent,
  ): Promise<MembershipChangeResult>;
}

/**
 * What `change` does to a user's `memberships`, given how many OTHER members of the project hold
 * `change.keepRole`: the memberships there before and the user's list after, or why it is refused.
 * Every store decides with it, inside its transaction.
 */
export function applyMembershipChange(
  memberships: readonly Membership[],
  change: MembershipChange,
  otherKeepRoleHolders: number,
): { before: Membership[]; after: Membership[] } | 'not_member' | 'last_role_holder' | 'already_member' {
  const before = memberships.filter((membership) => membership.projectKey === change.projectKey);
  if (change.addOnly && before.length > 0) return 'already_member';
  let after: Membership[];
  if (change.remove) after = memberships.filter((membership) => membership.projectKey !== change.projectKey);
  else if (before.length > 0)
    after = memberships.map((membership) =>
      membership.projectKey === change.projectKey ? { ...membership, role: change.role } : membership,
    );
  else if (change.clientId !== undefined)
    after = [...memberships, { projectKey: change.projectKey, clientId: change.clientId, role: change.role }];
  else return 'not_member';
  if (before.length === 0 && change.remove) return 'not_member';
  const holds = (list: readonly Membership[]) =>
    list.some((membership) => membership.projectKey === change.projectKey && membership.role === change.keepRole);
  if (change.keepRole !== undefined && holds(before) && !holds(after) && otherKeepRoleHolders === 0)
    return 'last_role_holder';
  return { before, after };
}
