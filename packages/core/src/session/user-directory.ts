/** A person who can sign in. */
export interface User {
  id: string;
  /** Normalised: trimmed, lower case. */
  email: string;
  name: string;
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

/**
 * Storage port for users and credentials. Implementations hash with `hashPassword` and verify with
 * `verifyPassword`; an unknown email must cost the same scrypt work as a wrong password, and a hash
 * `passwordNeedsRehash` flags is replaced after a successful login (only if it is still the one checked).
 */
export interface UserDirectory {
  /** The account when the email and password match; null otherwise, after the same work either way. */
  verifyCredentials(email: string, password: string): Promise<Account | null>;
  /** The account with this user id, or null. */
  getAccount(userId: string): Promise<Account | null>;
}

/** Trims and lower-cases an email address, the one spelling stored and compared. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
