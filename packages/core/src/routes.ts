// `@deskpilot/core/routes`: the session service's routes as declared — method, path, schemas, errors,
// who may call them — with what a module's declarations are written with. Light: `zod/mini`, no
// handler, no store, no Node built-in, no classic zod (the chat's are `@deskpilot/core/chat-routes`):
// what a module's declarations import, and what a typed client derives its calls and types from.
export {
  declareRoute,
  type RouteAnswer,
  type RouteAuth,
  type RouteDeclaration,
  type RouteHeader,
  type RouteInput,
  type RouteMethod,
  type RouteOutput,
  type RouteTakesInput,
} from './routes/declare-route.js';
export { described, isoTime } from './routes/answer-schemas.js';
export { sessionSchema } from './session/session-schema.js';
export { sessionRoutes } from './session/session-api.js';
export { recoveryRoutes } from './recovery/recovery-api.js';
export { stepUpRoutes } from './step-up/step-up-api.js';
export { organizationRoutes, teamRoutes } from './team/team-api.js';
