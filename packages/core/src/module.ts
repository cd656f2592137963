// `@deskpilot/core/module`: what a feature module of the session service is written against — the
// kernel's seam, routes served over the handler's dependencies (declared with `@deskpilot/core/routes`),
// the kernel's throttles, and the ports the step-up module asks of the modules it uses.
// `@deskpilot/passkeys`, `@deskpilot/sso` and `@deskpilot/magic-link` import nothing of core beyond this
// entry, `/routes` and `/session`.

// The seam
export type {
  Admission,
  SessionAdmission,
  SessionKernel,
  SessionModule,
  SessionModuleApis,
  SessionModuleParts,
  SessionRouteDependencies,
  SignInClient,
  SignInMethod,
  SignInRequired,
} from './session/session-service.js';

// Routes served, bound to the handler's dependencies (their declarations: `@deskpilot/core/routes`)
export {
  bindRoutes,
  serveRoute,
  type BoundRoute,
  type RouteRequestInput,
  type ServedRoute,
  type ServeRouteOptions,
} from './routes/route-table.js';
export { jsonResponse } from './http/http-request.js';

// What a module's routes share with the kernel's: the answer without a session, where a sign-in comes
// from, and the throttles by address and by account
export { noSessionError } from './session/require-session.js';
export { signInRequiredError } from './session/sign-in-required.js';
export { signInClient, throttleAddress, throttleLogin, throttleSignInAddress } from './session/session-routes.js';

// What step-up asks of the `passkeys` and `sso` modules
export {
  passkeysBefore,
  type ProviderSignIn,
  type StepUpPasskeys,
  type StepUpProvider,
} from './step-up/session-step-up.js';
