/** A person at an identity provider (`iss` + `sub`) bound to a user: the one who signed in through it. */
export interface IdentityLink {
  /** The provider's issuer identifier. */
  issuer: string;
  /** The provider's subject (`sub`): stable for the person, unlike their email. */
  subject: string;
  userId: string;
  /** Epoch milliseconds. */
  linkedAt: number;
}

/**
 * Storage port for identity links: which person at which provider is which user. At most one user per
 * person, and one person per user at each provider. Run `testIdentityLinkStore` from
 * `@deskpilot/sso/testing` against an implementation.
 */
export interface IdentityLinkStore {
  /** The user the person is linked to, or null. */
  find(issuer: string, subject: string): Promise<string | null>;
  /** The person a user is linked to at this provider, or null. */
  subjectOf(issuer: string, userId: string): Promise<string | null>;
  /**
   * Links a person to a user; false (nothing changed) when the person or the user is linked already
   * at this provider. Of concurrent links of one person, one wins.
   */
  link(link: IdentityLink): Promise<boolean>;
  /** Whether a user is bound to a person at any provider (then they recover through it, not by email). */
  isLinked(userId: string): Promise<boolean>;
  /** Removes every link of a user; returns how many. */
  deleteByUser(userId: string): Promise<number>;
}

/**
 * Creates an {@link IdentityLinkStore} in process memory: for tests and single-process development.
 *
 * @example
 * const identityLinks = createMemoryIdentityLinkStore();
 */
export function createMemoryIdentityLinkStore(): IdentityLinkStore {
  const byPerson = new Map<string, IdentityLink>();
  const byUser = new Map<string, IdentityLink>();
  const person = (issuer: string, subject: string) => JSON.stringify([issuer, subject]);
  const user = (issuer: string, userId: string) => JSON.stringify([issuer, userId]);
  return {
    find: async (issuer, subject) => byPerson.get(person(issuer, subject))?.userId ?? null,
    subjectOf: async (issuer, userId) => byUser.get(user(issuer, userId))?.subject ?? null,
    async link(link) {
      if (byPerson.has(person(link.issuer, link.subject)) || byUser.has(user(link.issuer, link.userId))) return false;
      const stored = Object.freeze({ ...link });
      byPerson.set(person(link.issuer, link.subject), stored);
      byUser.set(user(link.issuer, link.userId), stored);
      return true;
    },
    isLinked: async (userId) => [...byUser.values()].some((link) => link.userId === userId),
    async deleteByUser(userId) {
      let deleted = 0;
      for (const [key, link] of byUser)
        if (link.userId === userId) {
          byUser.delete(key);
          byPerson.delete(person(link.issuer, link.subject));
          deleted++;
        }
      return deleted;
    },
  };
}
