import { DeskpilotError } from '../errors/deskpilot-error.js';
import type { SignInRequired } from './session-service.js';

/**
 * The answer to a session a module refused (`sso_required`, 403): the organisation signs its members in
 * through its identity provider, named in the problem's `provider` for the client to go there.
 */
export function signInRequiredError({ provider }: SignInRequired): DeskpilotError {
  return new DeskpilotError('sso_required', {
    detail: `Sign in through ${provider.name}: the organisation of this project signs its members in there.`,
    provider: { id: provider.id, name: provider.name },
  });
}
