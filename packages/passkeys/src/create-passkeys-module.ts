import { bindRoutes, type SessionKernel, type SessionModule } from '@deskpilot/core/module';
import type { EmailMessage } from '@deskpilot/core/session';
import { createPasskeys, type PasskeyOptions, type Passkeys, type SessionPasskeys } from './passkeys.js';
import { servedPasskeyRoutes } from './passkey-routes.js';

/**
 * Passkeys (WebAuthn) as a module of the session service: registration for a signed-in user (a recent
 * sign-in asked), removal confirmed by one of their passkeys, and sign-in with a discoverable passkey
 * through the kernel's one way in. Serves the `/sessions/current/passkeys…` and `/sessions/passkey…`
 * routes; its API is `service.modules.passkeys`. A password reset removes the user's passkeys
 * (`kernel.revokeCredentials`).
 *
 * @example
 * const sessions = createSessionService({
 *   store, directory,
 *   modules: [createPasskeysModule({ store: passkeyStore, challenges: tokenStore, rpId: 'desk.example.com', origins })],
 * });
 */
export function createPasskeysModule(options: PasskeyOptions): SessionModule<'passkeys', SessionPasskeys> {
  return {
    name: 'passkeys',
    create(kernel) {
      const passkeys = sessionPasskeys(options, kernel, createPasskeys(options, kernel.context));
      return {
        api: passkeys,
        routes: (deps) => bindRoutes(servedPasskeyRoutes, { ...deps, passkeys }),
        deleteExpired: (now) => options.challenges.deleteExpired(now),
        revokeCredentials: async (userId) => (await options.store.deleteByUser(userId), 'passkeys'),
      };
    },
  };
}

/** The service's passkeys: the ceremonies, the owner told of a new passkey, sign-in ending in `startSession`. */
function sessionPasskeys(options: PasskeyOptions, kernel: SessionKernel, passkeys: Passkeys): SessionPasskeys {
  const { context } = kernel;
  return {
    ...passkeys,
    async register(account, response, name) {
      const result = await passkeys.register(account, response, name);
      if (result.ok)
        await kernel.recordAccountEvent(account, {
          type: 'passkey-added',
          session: null,
          data: { passkeyId: result.passkey.id, name: result.passkey.name },
        });
      // A new way into the account: its owner hears of it (by email, when the service sends any).
      const notify = options.email;
      if (result.ok && notify)
        notify
          .send(passkeyAddedMessage(account.user.email, result.passkey.name, options.appName ?? 'Deskpilot'))
          .catch((error: unknown) => kernel.logger.error('passkey notification could not be sent', error));
      return result;
    },
    async remove(userId, id, response, credentialIds) {
      const result = await passkeys.remove(userId, id, response, credentialIds);
      if (result === 'removed')
        await kernel.recordAccountEvent(userId, { type: 'passkey-removed', session: null, data: { passkeyId: id } });
      // A way in gone: its owner hears of it too (an intruder removing theirs is news).
      const notify = result === 'removed' ? options.email : undefined;
      const account = notify && (await context.directory.getAccount(userId));
      if (notify && account)
        notify
          .send(passkeyRemovedMessage(account.user.email, options.appName ?? 'Deskpilot'))
          .catch((error: unknown) => kernel.logger.error('passkey notification could not be sent', error));
      return result;
    },
    async signIn(response, input = {}) {
      const verified = await passkeys.verifySignIn(response);
      return verified.ok ? kernel.startSession(verified.account, { ...input, method: 'passkey' }) : verified;
    },
  };
}

/** The email telling a user a passkey was added to their account. */
function passkeyAddedMessage(to: string, name: string, appName: string): EmailMessage {
  return {
    to,
    subject: `A passkey was added to your ${appName} account`,
    text: [
      `A passkey named "${name}" was added to the ${appName} account for ${to}. It can sign in without a password.`,
      '',
      'If this was not you, reset your password now: a reset removes every passkey and signs you out everywhere.',
    ].join('\n'),
  };
}

/** The email telling a user a passkey was removed from their account. */
function passkeyRemovedMessage(to: string, appName: string): EmailMessage {
  return {
    to,
    subject: `A passkey was removed from your ${appName} account`,
    text: [
      `A passkey was removed from the ${appName} account for ${to}, confirmed with one of its passkeys.`,
      '',
      'If this was not you, reset your password now: a reset removes every passkey and signs you out everywhere.',
    ].join('\n'),
  };
}
