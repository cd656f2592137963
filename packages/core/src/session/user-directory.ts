/** A person who can sign in. */
export interface User {
  id: string;
  /** Normalised: trimmed, lower case. */
  email: string;
  name: string;
  /**
   * Whether the user proved they receive mail at `email` (a verification link, a password reset, an
   * identity provider that vouches for it). Absent from a directory that does not track it: not verified.
   */
  emailVerified?: boolean;
}

/** Access to one project for one client, with the role held there. */
export interface Membership {
  projectKey: string;
  clientId: string;
  role: string;
}

/** A user with their memberships. */
export interface Account {
  user: User;
  memberships: Membership[];
}

/** The stored credentials of one user, as {@link UserDirectory.findCredentials} returns them. */
export interface Credentials {
  userId: string;
  /** The stored hash, exactly as written (any format `verifyPassword` reads). */
  passwordHash: string;
}

/**
 * Storage port for users and credentials: plain data in and out. The directory never hashes or
 * verifies a password at login: `verifyCredentials` in core does, and runs the unknown-email decoy, so
 * no directory can leak which emails exist. Run `testUserDirectory` from `@deskpilot/core/testing`
 * against an implementation.
 */
export interface UserDirectory {
  /**
   * The credentials of the user with this email, or null. Core passes the email through
   * {@link normalizeEmail} first and the directory stores emails normalised the same way, so it
   * compares exactly. Input that no stored email can equal (a NUL, a lone surrogate) is null, never a
   * store error.
   */
  findCredentials(email: string): Promise<Credentials | null>;
  /** The account with this user id, or null. */
  getAccount(userId: string): Promise<Account | null>;
  /**
   * Replaces the user's hash with `nextHash` only while it is still `previousHash` (a password changed
   * meanwhile is never overwritten); true when it was replaced.
   */
  updatePasswordHash(userId: string, previousHash: string, nextHash: string): Promise<boolean>;
  /**
   * Marks the user's email verified, only while it is still `email` (an address changed since the
   * link was sent stays unverified); true when the user has that email (verified now or before).
   */
  setEmailVerified(userId: string, email: string): Promise<boolean>;
}

/** Trims and lower-cases an email address, the one spelling stored and compared. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
