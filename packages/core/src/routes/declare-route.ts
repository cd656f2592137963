import type { $ZodType, input, output } from 'zod/v4/core';
import type { ErrorCode } from '../errors/deskpilot-error.js';

/** The methods a Deskpilot route answers. */
export type RouteMethod = 'GET' | 'POST' | 'DELETE';

/**
 * Who may call a route: anyone (`none`), the holder of a session cookie (`session`), or a chat caller
 * whose identity the chat handler resolves (a signed grant, the host's `resolveContext`, or the body).
 */
export type RouteAuth = 'none' | 'session' | 'chat';

/** A response header a route documents. */
export type RouteHeader = 'set-cookie' | 'retry-after' | 'rate-limit' | 'location' | 'ui-message-stream';

/** What a route answers when it succeeds. */
export interface RouteAnswer {
  status: 200 | 201 | 202 | 204 | 302;
  description: string;
  /** The JSON body's schema (its output side); absent: no JSON body. */
  schema?: $ZodType | undefined;
  /** The body's media type when it is not JSON (`text/event-stream`, `text/csv`). */
  contentType?: string | undefined;
  /** The name the body's schema is listed under in the OpenAPI document's components. */
  component?: string | undefined;
  headers?: readonly RouteHeader[] | undefined;
}

/**
 * A route, declared once: method, path, schemas, errors and who may call it. The handler's dispatch,
 * the OpenAPI document and the typed client are all derived from it.
 */
export interface RouteDeclaration {
  /** Unique within a service: the OpenAPI `operationId`, the client's method name, the span's name. */
  operationId: string;
  method: RouteMethod;
  /** The path, under the handler's base path (`/sessions/current`). */
  path: string;
  summary: string;
  auth: RouteAuth;
  /** The JSON body's schema; required for a route that reads a body. */
  body?: $ZodType | undefined;
  /** The query's schema: an object of string fields. */
  query?: $ZodType | undefined;
  /** Request headers the route reads (a `GET`'s context, which has no body), each optional. */
  requestHeaders?: Readonly<Record<string, { description: string; maxLength: number }>> | undefined;
  answer: RouteAnswer;
  /** Another success the route can answer with, by its own status (an invitation accepted signed in, or by a new account). */
  otherAnswer?: RouteAnswer | undefined;
  /** Every stable code the route itself answers with (the body's and the handler's own are added). */
  errors: readonly ErrorCode[];
}

/** Declares a route, keeping its literal types for what is derived from it (the client's methods). */
export function declareRoute<const Route extends RouteDeclaration>(route: Route): Route {
  return route;
}

/** The input a client sends to a route: its body's and its query's fields, as one object. */
export type RouteInput<Route extends RouteDeclaration> = (Route['body'] extends $ZodType
  ? input<Route['body']>
  : unknown) &
  (Route['query'] extends $ZodType ? input<Route['query']> : unknown);

/** What a route answers with when it succeeds: its body's schema's output, or nothing. */
export type RouteOutput<Route extends RouteDeclaration> =
  | (Route['answer']['schema'] extends $ZodType ? output<Route['answer']['schema']> : void)
  | (NonNullable<Route['otherAnswer']> extends { schema: infer Schema extends $ZodType } ? output<Schema> : never);

/** Whether the route takes any input (its client method then takes an argument). */
export type RouteTakesInput<Route extends RouteDeclaration> = Route['body'] extends $ZodType
  ? true
  : Route['query'] extends $ZodType
    ? true
    : false;
