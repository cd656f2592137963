import type { Logger } from '@deskpilot/core/session';
import type { OrganizationAdmins } from '@deskpilot/core/team';
import type { SsoProvider, SsoProviderSource } from '../single-sign-on.js';
import type { SsoConnectionsOptions } from './connection-routes.js';
import { secretContext, type SsoConnectionRecord } from './sso-connection-store.js';

/**
 * Organisations' enabled connections as providers of a sign-in, looked up when a sign-in needs one, so
 * an admin's change holds from the next sign-in on. A connection signs people in:
 * - for the domains the operator lists for its organisation only (`domains`: one it no longer lists
 *   stops counting at once);
 * - into its organisation's projects only (a connection of an organisation without projects, or of a
 *   service that keeps no organisations, is offered to nobody);
 * - people who have an account already (connections provision no one yet);
 * and one whose secret does not open (its key dropped too early, or its issuer changed under it)
 * signs nobody in, and is logged.
 */
export function connectionProviders(
  options: SsoConnectionsOptions,
  organizations: () => OrganizationAdmins | null | undefined,
  logger: Logger,
): SsoProviderSource {
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
    return {
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
    };
  };
  return {
    byId: async (id) => (id.startsWith('conn_') ? providerOf(await options.store.get(id)) : undefined),
    byDomain: async (domain) => (await providerOf(await options.store.findByDomain(domain))) ?? null,
  };
}
