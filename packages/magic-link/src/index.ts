// @deskpilot/magic-link: sign-in by a link sent by email, as a module of the Deskpilot session
// service, written against core's public seam alone (`@deskpilot/core/module`, `/routes`, `/session`).
export {
  createMagicLinkModule,
  type MagicLinkOptions,
  type MagicLinkRequestOutcome,
  type MagicLinkSignInResult,
  type SessionMagicLink,
} from './create-magic-link-module.js';
export { magicLinkRoutes } from './magic-link-api.js';
export type { MagicLinkEvent } from './magic-link-event.js';
