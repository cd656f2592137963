/**
 * What an organisation's connection says of its provider beyond the columns a store looks up by: the
 * same meaning as the fields of the same names of a configured `SsoProvider`. (Its projects are its
 * organisation's; the claim → role mapping is to come.)
 */
export interface SsoConnectionSettings {
  /** Scopes asked for besides `openid`. @default ["email", "profile"] */
  scopes?: string[];
  /** The claim that vouches for the email instead of `email_verified` (Entra ID: `xms_edov`). */
  emailVerifiedClaim?: string;
  /** Claims the ID token must carry with these values (Google: `{ hd }`, Entra ID: `{ tid }`). */
  requiredClaims?: Record<string, string | boolean | string[]>;
  /**
   * Project roles from a claim of the ID token (`groups`), at every sign-in: for each project a rule
   * names (one of the organisation's), the first rule whose group the claim lists gives the role, and
   * none takes the membership away. A person with no account whose groups give a role gets one.
   */
  roles?: { claim: string; rules: Array<{ group: string; projectKey: string; clientId: string; role: string }> };
  /**
   * The organisation requires its connections: a session in one of its projects comes from a single
   * sign-on through one of its enabled connections (password, passkey and the rest refused, a project
   * switch into it asks for a sign-in there), except for the organisation's admins (the break-glass,
   * recorded). Holds from each member's next sign-in or switch.
   */
  signInRequired?: boolean;
}

/**
 * An organisation's OpenID Connect connection, as stored: the client secret only sealed (see
 * `createSecretBox`), never in the clear.
 */
export interface SsoConnectionRecord {
  /** The store key (`conn_…`); also what the sealed secret is bound to. */
  id: string;
  /** The organisation whose admins edit it. */
  organization: string;
  /** What the sign-in page calls it. */
  name: string;
  issuer: string;
  clientId: string;
  /** The client secret sealed by a `SecretBox` for this connection's id. */
  sealedClientSecret: string;
  tokenEndpointAuthMethod: 'client_secret_basic' | 'client_secret_post';
  /** Lower-case email domains it is the authority for, sorted; each belongs to one connection at most, across organisations. */
  domains: string[];
  settings: SsoConnectionSettings;
  /** A disabled connection signs nobody in and is found by no domain. */
  enabled: boolean;
  /** Epoch milliseconds. */
  createdAt: number;
  updatedAt: number;
  /** 1 when created, one more at each replacement: what `replace` checks. */
  version: number;
}

/** What `create` came to: `exists` (the id is taken), `domain_taken` (another connection has one of its domains). */
export type SsoConnectionCreateResult = 'created' | 'exists' | 'domain_taken';

/** What `replace` came to: `conflict` (the stored version is not the one before), `domain_taken` as for `create`. */
export type SsoConnectionReplaceResult = 'replaced' | 'not_found' | 'conflict' | 'domain_taken';

/**
 * Storage port for organisations' connections. Data in, data out: the single sign-on module seals and
 * opens secrets and decides; the store keeps records, keeps each domain to one connection (of
 * concurrent claims one wins), and replaces a record only from the version the caller read. Run
 * `testSsoConnectionStore` from `@deskpilot/sso/testing` against an implementation.
 */
export interface SsoConnectionStore {
  /** Inserts a connection (its `version` 1); nothing changes unless it says `created`. */
  create(record: SsoConnectionRecord): Promise<SsoConnectionCreateResult>;
  /** The connection with this id, or null. */
  get(id: string): Promise<SsoConnectionRecord | null>;
  /** An organisation's connections, oldest first. */
  listByOrganization(organization: string): Promise<SsoConnectionRecord[]>;
  /** Every connection, oldest first (for a key rotation, and to load them at start). */
  list(): Promise<SsoConnectionRecord[]>;
  /** The enabled connection that is the authority for this lower-case domain, or null. */
  findByDomain(domain: string): Promise<SsoConnectionRecord | null>;
  /**
   * Replaces a connection with `record` (same id) while the stored version is `record.version - 1`;
   * nothing changes unless it says `replaced`.
   */
  replace(record: SsoConnectionRecord): Promise<SsoConnectionReplaceResult>;
  /** Deletes a connection; false when there is none with this id. */
  delete(id: string): Promise<boolean>;
}

/** The context a connection's client secret is sealed for: its id and its issuer, so that a secret is never sent to an issuer it was not given for. */
export const secretContext = (connection: { id: string; issuer: string }): string =>
  JSON.stringify([connection.id, connection.issuer]);

const frozen = (record: SsoConnectionRecord): SsoConnectionRecord =>
  structuredClone({ ...record, domains: [...record.domains].sort() });

/**
 * Creates an {@link SsoConnectionStore} in process memory: for tests and single-process development.
 *
 * @example
 * const connections = createMemorySsoConnectionStore();
 */
export function createMemorySsoConnectionStore(): SsoConnectionStore {
  const records = new Map<string, SsoConnectionRecord>();
  const owners = new Map<string, string>();
  const takenByOther = (record: SsoConnectionRecord) =>
    record.domains.some((domain) => (owners.get(domain) ?? record.id) !== record.id);
  const setDomains = (record: SsoConnectionRecord) => {
    for (const [domain, owner] of owners) if (owner === record.id) owners.delete(domain);
    for (const domain of record.domains) owners.set(domain, record.id);
  };
  const copy = (record: SsoConnectionRecord | undefined) => (record ? frozen(record) : null);
  return {
    async create(record) {
      if (records.has(record.id)) return 'exists';
      if (takenByOther(record)) return 'domain_taken';
      records.set(record.id, frozen({ ...record, version: 1 }));
      setDomains(record);
      return 'created';
    },
    get: async (id) => copy(records.get(id)),
    listByOrganization: async (organization) =>
      [...records.values()].filter((record) => record.organization === organization).map(frozen),
    list: async () => [...records.values()].map(frozen),
    async findByDomain(domain) {
      const record = records.get(owners.get(domain) ?? '');
      return record?.enabled ? frozen(record) : null;
    },
    async replace(record) {
      const stored = records.get(record.id);
      if (!stored) return 'not_found';
      if (stored.version !== record.version - 1) return 'conflict';
      if (takenByOther(record)) return 'domain_taken';
      records.set(record.id, frozen(record));
      setDomains(record);
      return 'replaced';
    },
    async delete(id) {
      if (!records.delete(id)) return false;
      for (const [domain, owner] of owners) if (owner === id) owners.delete(domain);
      return true;
    },
  };
}
