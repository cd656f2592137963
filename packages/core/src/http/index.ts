export {
  fromFetchRequest,
  fromFetchResponse,
  jsonResponse,
  problemResponse,
  toFetchResponse,
  type HttpRequest,
  type HttpResponse,
  type RequestInfo,
} from './http-request.js';
export { isJsonContentType, readJsonBody, type ReadJsonBodyOptions } from './read-json-body.js';
export { checkRequestOrigin, normalizeOrigins } from './check-request-origin.js';
export {
  createClientAddressResolver,
  type ClientAddressResolver,
  type ClientAddressResolverOptions,
} from './create-client-address-resolver.js';
