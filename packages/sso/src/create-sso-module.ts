import { bindRoutes, type SessionKernel, type SessionModule } from '@deskpilot/core/module';
import { createSlidingWindowLimiter, type Account, type RateLimiter } from '@deskpilot/core/session';
import type { OrganizationAdmins } from '@deskpilot/core/team';
import { connectionProviders } from './connections/connection-providers.js';
import {
  createSingleSignOn,
  type SessionSso,
  type SingleSignOnOptions,
  type SsoProviderSource,
} from './single-sign-on.js';
import { servedConnectionRoutes, type SsoConnectionsOptions } from './connections/connection-routes.js';
import { servedSsoRoutes } from './sso-routes.js';
import { requiredSignIn } from './connections/required-sign-in.js';

/** Options of {@link createSsoModule}: single sign-on's own, and its routes' throttle. */
export interface SsoModuleOptions extends SingleSignOnOptions {
  /**
   * Single sign-on starts and callbacks per client address: a budget of its own, so an office signing
   * in through its provider never uses up the password throttle.
   * @default 300 per 5 minutes, in process
   */
  throttle?: RateLimiter;
  /**
   * Organisations' own connections, edited by their admins through `/sessions/organizations/sso-connections`
   * and signing people in for the domains the operator lists for each organisation, into its projects
   * only (needs the team module with organisations).
   */
  connections?: SsoConnectionsOptions;
}

/**
 * OpenID Connect single sign-on (`openid-client`) as a module of the session service: per identity
 * provider, home-realm discovery by email domain, authorization code with PKCE, state and nonce,
 * provisioning when configured, and sign-out at the provider; a sign-in ends in the kernel's one way in.
 * Serves `/sessions/sso/…`; its API is `service.modules.sso`. A user bound at a provider recovers there
 * (`kernel.signsInElsewhere`), and signing out clears its sign-out cookie too.
 *
 * @example
 * const sessions = createSessionService({
 *   store, directory,
 *   modules: [createSsoModule({ providers, redirectUri, landingUrl, identityLinks })],
 * });
 */
export function createSsoModule(options: SsoModuleOptions): SessionModule<'sso', SessionSso> {
  return {
    name: 'sso',
    create(kernel) {
      const team = () => kernel.module<{ organizationAdmins: OrganizationAdmins | null }>('team')?.organizationAdmins;
      const source =
        options.connections &&
        connectionProviders(options.connections, team, {
          logger: kernel.logger,
          audit: kernel.audit,
          getAccount: (userId) => kernel.context.directory.getAccount(userId),
          now: kernel.context.now,
          provisions: options.addUser !== undefined,
          get adminRole() {
            return kernel.module<{ adminRole?: string }>('team')?.adminRole;
          },
        });
      const sso = sessionSso(options, kernel, source);
      const connectionRoutes =
        options.connections &&
        servedConnectionRoutes(options.connections, kernel, options.allowInsecureRequests ?? false, sso.checkProvider);
      const ssoThrottle =
        options.throttle ??
        createSlidingWindowLimiter({ limit: 300, windowMs: 5 * 60 * 1000, now: kernel.context.now });
      return {
        api: sso,
        routes: (deps) => [
          ...bindRoutes(servedSsoRoutes, { ...deps, sso, ssoThrottle }),
          ...(connectionRoutes ? bindRoutes(connectionRoutes, deps) : []),
        ],
        signsInElsewhere: (userId) => options.identityLinks.isLinked(userId),
        clearOnSignOut: [sso.clearSignOut],
        admit:
          options.connections &&
          requiredSignIn({ store: options.connections.store, organizations: team, signedInAt: sso.signedInAt }),
      };
    },
  };
}

/** The service's single sign-on: the flow of `createSingleSignOn`, ending in `startSession`. */
function sessionSso(options: SingleSignOnOptions, kernel: SessionKernel, source?: SsoProviderSource): SessionSso {
  const { context } = kernel;
  // A session made for a browser that is gone: ended again at once (a sign-in, then a sign-out, in the trail).
  const endUndelivered = (setCookie: string) => kernel.signOut(setCookie.split(';', 1)[0]!);
  const singleSignOn = createSingleSignOn(
    options,
    context,
    { cookiePrefix: kernel.cookie.prefix, secure: kernel.cookie.secure, pepper: kernel.pepper },
    source,
  );
  return {
    ...singleSignOn,
    async signIn(search, cookieHeader, client, signal) {
      const callbackUrl = new URL(options.redirectUri);
      callbackUrl.search = search;
      const finished = await singleSignOn.finish(callbackUrl, cookieHeader, signal);
      if (!finished.ok) return finished;
      // The browser is gone (its request aborted, a forwarder gave up): nobody would receive the session.
      if (signal?.aborted) return { ok: false, reason: 'provider_error' };
      const projectKey = ssoLanding(finished);
      if (projectKey === null) return { ok: false, reason: 'forbidden' };
      const started = await kernel.startSession(finished.account, {
        projectKey,
        cookieHeader,
        method: 'sso',
        provider: finished.providerId,
        client,
      });
      if (!started.ok) return { ok: false, reason: started.reason === 'sso_required' ? 'sso_required' : 'forbidden' };
      // Gone while the session was made: ended again (signed in, then out, in the trail), never left behind.
      if (signal?.aborted) {
        await endUndelivered(started.setCookie);
        return { ok: false, reason: 'provider_error' };
      }
      // Kept as long as the session may live: signing out later can sign out at the provider too.
      const setSignOutCookie = await singleSignOn.sealSignOut(
        {
          provider: finished.providerId,
          userId: finished.account.user.id,
          signedInAt: Date.parse(started.session.createdAt),
          idToken: finished.idToken,
          authenticatedAt: finished.authenticatedAt,
          ...finished.tokenIds,
        },
        Date.parse(started.session.expiresAt) - context.now(),
      );
      return { ...started, setSignOutCookie, providerId: finished.providerId };
    },
    landing(refusal) {
      const url = new URL(options.landingUrl);
      if (refusal) url.hash = `sso-error=${refusal}`;
      return url.href;
    },
  };
}

/**
 * The project a single sign-on opens: the one asked for, or (for a provider of a tenant's `projects`)
 * the person's first membership among them; null when the provider may not sign them into any.
 */
function ssoLanding(finished: {
  account: Account;
  projectKey?: string;
  projects: readonly string[] | undefined;
}): string | undefined | null {
  const allowed = finished.projects;
  if (!allowed) return finished.projectKey;
  if (finished.projectKey !== undefined) return allowed.includes(finished.projectKey) ? finished.projectKey : null;
  return finished.account.memberships.find((membership) => allowed.includes(membership.projectKey))?.projectKey ?? null;
}
