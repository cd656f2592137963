import type { Account, AuditEvent, AuditStore, Logger, Membership } from '@deskpilot/core/session';
import type { OrganizationAdmins } from '@deskpilot/core/team';
import { mappedRoles, type RoleMapping, type SsoProvider, type SsoProviderSource } from '../single-sign-on.js';
import type { SsoConnectionsOptions } from './connection-routes.js';
import { secretContext, type SsoConnectionRecord } from './sso-connection-store.js';

/**
 * Organisations' enabled connections as providers of a sign-in, looked up when a sign-in needs one, so
 * an admin's change holds from the next sign-in on. A connection signs people in:
 * - for the domains the operator lists for its organisation only (`domains`: one it no longer lists
 *   stops counting at once);
 * - into its organisation's projects only (a connection of an organisation without projects, or of a
 *   service that keeps no organisations, is offered to nobody);
 * - people who have an account already, or (with `addUser`) whose groups give them a role there;
 * - with `roles`, the roles their groups give, written at every sign-in (`applyRoles`);
 * and one whose secret does not open (its key dropped too early, or its issuer changed under it)
 * signs nobody in, and is logged.
 */
export function connectionProviders(
  options: SsoConnectionsOptions,
  organizations: () => OrganizationAdmins | null | undefined,
  service: {
    logger: Logger;
    audit: AuditStore | undefined;
    getAccount: (userId: string) => Promise<Account | null>;
    now: () => number;
    /** Whether a person with no account may get one (the module has `addUser`). */
    provisions: boolean;
    /** The team's admin role: a sign-in never takes it from a project's last admin. */
    adminRole: string | undefined;
  },
): SsoProviderSource {
  const { logger } = service;
  /** The organisation of each provider made from a connection: what its roles are written for. */
  const organizationOf = new WeakMap<SsoProvider, string>();
  const providerOf = async (record: SsoConnectionRecord | null): Promise<SsoProvider | undefined> => {
    if (!record?.enabled) return undefined;
    const owned = new Set(await options.domains(record.organization));
    const domains = record.domains.filter((domain) => owned.has(domain));
    const projects = (await organizations()?.projects(record.organization)) ?? [];
    if (domains.length === 0 || projects.length === 0) return undefined;
    let clientSecret: string;
    try {
      clientSecret = await options.secrets.open(record.sealedClientSecret, secretContext(record));
    } catch (error) {
      logger.error(`single sign-on connection ${record.id}: its client secret does not open`, error);
      return undefined;
    }
    const { scopes = ['email', 'profile'], emailVerifiedClaim, requiredClaims } = record.settings;
    const roles = options.memberships ? record.settings.roles : undefined;
    const provider: SsoProvider = {
      id: record.id,
      name: record.name,
      issuer: record.issuer,
      clientId: record.clientId,
      clientSecret,
      tokenEndpointAuthMethod: record.tokenEndpointAuthMethod,
      domains,
      scopes: ['openid', ...scopes.filter((scope) => scope !== 'openid')],
      projects,
      ...(emailVerifiedClaim === undefined ? {} : { emailVerifiedClaim }),
      ...(requiredClaims === undefined ? {} : { requiredClaims }),
      ...(roles
        ? { roles: { claim: roles.claim, rules: roles.rules.filter((rule) => projects.includes(rule.projectKey)) } }
        : {}),
      ...(roles && service.provisions ? { provisioning: provisioningOf(roles) } : {}),
    };
    organizationOf.set(provider, record.organization);
    return provider;
  };
  return {
    byId: async (id) => (id.startsWith('conn_') ? providerOf(await options.store.get(id)) : undefined),
    byDomain: async (domain) => (await providerOf(await options.store.findByDomain(domain))) ?? null,
    applyRoles: async (provider, account, claims) => {
      const organization = organizationOf.get(provider);
      if (organization === undefined) return account;
      // Deprovisioned by the organisation's directory: its groups give nothing back at a sign-in.
      const deprovisioned = (await options.deprovisioned?.(organization, account.user.id)) ?? false;
      return applyRoles(options, service, provider, account, deprovisioned ? {} : claims);
    },
  };
}

/** A first sign-in's memberships from the mapping: each group's rules (the roles are set right after). */
function provisioningOf(roles: RoleMapping): NonNullable<SsoProvider['provisioning']> {
  // No prototype: a group named `__proto__` or `constructor` is a group like any other.
  const values = Object.create(null) as Record<string, Membership[]>;
  for (const { group, projectKey, clientId, role } of roles.rules)
    (values[group] ??= []).push({ projectKey, clientId, role });
  return { memberships: [], byClaim: { claim: roles.claim, values } };
}

/**
 * Writes the roles a connection's mapping gives for the ID token's claims, each change in its project's
 * trail (`sso-role-set`, `sso-membership-removed`): the account as it is then.
 */
async function applyRoles(
  options: SsoConnectionsOptions,
  service: Parameters<typeof connectionProviders>[2],
  provider: SsoProvider,
  account: Account,
  claims: Record<string, unknown>,
): Promise<Account> {
  if (!provider.roles || !options.memberships) return account;
  let changed = false;
  for (const { projectKey, clientId, role } of mappedRoles(provider.roles, claims)) {
    const held = account.memberships.filter((membership) => membership.projectKey === projectKey);
    if (role ? held.length > 0 && held.every((membership) => membership.role === role) : held.length === 0) continue;
    const event = (before: Membership[]): AuditEvent => ({
      projectKey,
      type: role ? 'sso-role-set' : 'sso-membership-removed',
      actor: null,
      session: null,
      subject: account.user.id,
      data: { connection: provider.id, before: before.map((membership) => membership.role), after: role },
      at: service.now(),
    });
    // A sign-in never takes the project's last admin away: its admins decide that.
    const keepRole = service.adminRole;
    const result = await options.memberships.changeMembership(
      role
        ? { userId: account.user.id, projectKey, role, clientId, keepRole }
        : { userId: account.user.id, projectKey, remove: true, keepRole },
      event,
    );
    if (result.ok && !result.audited) await service.audit?.append(event(result.before));
    changed ||= result.ok;
  }
  return changed ? ((await service.getAccount(account.user.id)) ?? account) : account;
}
