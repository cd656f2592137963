// @deskpilot/core/openapi: the session and chat routes as OpenAPI 3.1 documents, generated from the
// zod schemas the handlers validate with.
export {
  chatOpenApi,
  chatRouteDeclarations,
  sessionOpenApi,
  sessionRouteDeclarations,
  type OpenApiDocument,
  type OpenApiOptions,
} from './openapi/openapi.js';
