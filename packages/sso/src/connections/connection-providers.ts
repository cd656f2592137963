import type { Logger } from '@deskpilot/core/session';
import type { OrganizationAdmins } from '@deskpilot/core/team';
import type { SsoProvider, SsoProviderSource } from '../single-sign-on.js';
import type { SecretBox } from './secret-box.js';
import type { SsoConnectionRecord, SsoConnectionStore } from './sso-connection-store.js';

/**
 * Organisations' enabled connections as providers of a sign-in: looked up when a sign-in needs one,
 * so an admin's change holds from the next sign-in on. A connection signs people into its
 * organisation's projects only (none when the service keeps no organisations: refused, not opened
 * wider); one whose secret does not open (its key dropped too early) signs nobody in, and is logged.
 */
export function connectionProviders(
  options: { store: SsoConnectionStore; secrets: SecretBox },
  organizations: () => OrganizationAdmins | null | undefined,
  logger: Logger,
): SsoProviderSource {
  const providerOf = async (record: SsoConnectionRecord | null): Promise<SsoProvider | undefined> => {
    if (!record?.enabled) return undefined;
    let clientSecret: string;
    try {
      clientSecret = await options.secrets.open(record.sealedClientSecret, record.id);
    } catch (error) {
      logger.error(`single sign-on connection ${record.id}: its client secret does not open`, error);
      return undefined;
    }
    const { scopes = ['email', 'profile'], emailVerifiedClaim, requiredClaims, provisioning } = record.settings;
    return {
      id: record.id,
      name: record.name,
      issuer: record.issuer,
      clientId: record.clientId,
      clientSecret,
      tokenEndpointAuthMethod: record.tokenEndpointAuthMethod,
      domains: record.domains,
      scopes: ['openid', ...scopes.filter((scope) => scope !== 'openid')],
      projects: (await organizations()?.projects(record.organization)) ?? [],
      ...(emailVerifiedClaim === undefined ? {} : { emailVerifiedClaim }),
      ...(requiredClaims === undefined ? {} : { requiredClaims }),
      ...(provisioning === undefined ? {} : { provisioning }),
    };
  };
  return {
    byId: async (id) => (id.startsWith('conn_') ? providerOf(await options.store.get(id)) : undefined),
    byDomain: async (domain) => (await providerOf(await options.store.findByDomain(domain))) ?? null,
  };
}
