import type { Admission, SessionAdmission } from '@deskpilot/core/module';
import type { OrganizationAdmins } from '@deskpilot/core/team';
import type { SingleSignOn } from '../single-sign-on.js';
import type { SsoConnectionRecord, SsoConnectionStore } from './sso-connection-store.js';

/** What the required sign-in reads: the connections, who administers what, and a session's provider. */
export interface RequiredSignInDependencies {
  store: SsoConnectionStore;
  organizations: () => OrganizationAdmins | null | undefined;
  /** The provider this very session signed in at, from the browser's sealed hint (null: none, or another session's). */
  signedInAt: SingleSignOn['signedInAt'];
}

const requires = (connection: SsoConnectionRecord) => connection.settings.signInRequired === true;

/**
 * The sign-in an organisation requires (a connection of it with `signInRequired`), as the kernel's
 * `admit`: a session in one of its projects comes from a single sign-on through one of its enabled
 * connections — a sign-in through one, or a project switch of a session that signed in through one.
 * Any other way in (password, passkey, link, invitation, another provider, a switch from a session of
 * those) is refused with the provider to sign in at; a switch then signs in there for that project.
 * The organisation's admins keep every way in (the break-glass when the provider is down): each such
 * sign-in is recorded with `breakGlass: true`. Fails closed: with its connections disabled, only its
 * admins get in.
 */
export function requiredSignIn(deps: RequiredSignInDependencies): (request: SessionAdmission) => Promise<Admission> {
  const admitted: Admission = { ok: true };
  return async (request) => {
    const organizations = deps.organizations();
    if (!organizations) return admitted;
    const organization = await organizations.organizationOf(request.projectKey);
    if (organization === null) return admitted;
    const connections = await deps.store.listByOrganization(organization);
    if (!connections.some(requires)) return admitted;
    const enabled = connections.filter((connection) => connection.enabled);
    const through = await providerOf(deps, request);
    if (through !== undefined && enabled.some((connection) => connection.id === through)) return admitted;
    if (await organizations.isAdmin(organization, request.account.user.id))
      return { ok: true, audit: { breakGlass: true } };
    const provider = enabled.find(requires) ?? enabled[0] ?? connections.find(requires)!;
    return { ok: false, reason: 'sso_required', provider: { id: provider.id, name: provider.name } };
  };
}

/** The identity provider the session about to open comes from: the sign-in's, or the switching session's. */
async function providerOf(deps: RequiredSignInDependencies, request: SessionAdmission): Promise<string | undefined> {
  if (request.kind === 'sign-in') return request.method === 'sso' ? request.provider : undefined;
  const signedIn = await deps.signedInAt(request.cookieHeader, {
    userId: request.account.user.id,
    signedInAt: request.session.signedInAt,
    projectKey: request.projectKey,
  });
  return signedIn?.provider.id;
}
