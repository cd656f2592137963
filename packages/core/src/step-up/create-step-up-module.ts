import { bindRoutes } from '../routes/route-table.js';
import type { SessionKernel, SessionModule } from '../session/session-service.js';
import {
  createSessionStepUp,
  type SessionStepUp,
  type StepUpOptions,
  type StepUpPasskeys,
  type StepUpProvider,
} from './session-step-up.js';
import { servedStepUpRoutes } from './step-up-routes.js';

/**
 * Step-up for risky approvals as a module of the session service: a signed proof that the signed-in
 * user verified themselves just now — with a passkey when they have one (the assertion bound to the
 * approval), else their password (through the hash gate), a recent sign-in, or a new sign-in at their
 * identity provider — which the chat service checks before it runs an approval its policy names. Uses
 * the `passkeys` and `sso` modules when the service has them (give them before this one). Serves
 * `/sessions/current/step-up…`; its API is `service.modules.stepUp`.
 *
 * @example
 * const sessions = createSessionService({
 *   store, directory,
 *   modules: [createPasskeysModule(passkeyOptions), createStepUpModule({ secret: process.env.STEP_UP_SECRET! })],
 * });
 */
export function createStepUpModule(options: StepUpOptions): SessionModule<'stepUp', SessionStepUp> {
  return {
    name: 'stepUp',
    create(kernel) {
      const stepUp = sessionStepUp(options, kernel);
      return { api: stepUp, routes: (deps) => bindRoutes(servedStepUpRoutes, { ...deps, stepUp }) };
    },
  };
}

/** Step-up over the kernel: passkeys when the user has one, else the password through the hash gate, or a recent sign-in. */
function sessionStepUp(options: StepUpOptions, kernel: SessionKernel): SessionStepUp {
  return createSessionStepUp(options, {
    context: kernel.context,
    // The modules of those names, through the narrow ports step-up declares (`StepUpPasskeys`, `StepUpProvider`).
    passkeys: kernel.module<StepUpPasskeys>('passkeys'),
    atProvider: kernel.module<StepUpProvider>('sso'),
    isBoundAtProvider: kernel.signsInElsewhere,
    checkPassword: kernel.checkPassword,
  });
}
