import { safeParse } from 'zod/v4/core';
import { expect } from 'vitest';
import type { RouteDeclaration } from '../routes/declare-route.js';

/**
 * Wraps a handler's `fetch` so every success it answers on a declared route is checked against the
 * route's declared answer (status, and the JSON body against its schema): a suite that drives the
 * routes then proves the declarations true as it goes.
 */
export function checkDeclaredAnswers<Handler extends { fetch: (...args: never[]) => Promise<Response> }>(
  handler: Handler & { routes: readonly RouteDeclaration[] },
): Handler {
  const fetch = async (...args: Parameters<Handler['fetch']>) => {
    const response = await handler.fetch(...args);
    const request = args[0] as unknown as Request;
    const path = new URL(request.url).pathname;
    const route = handler.routes.find((declared) => declared.method === request.method && declared.path === path);
    if (!route || response.status >= 300) return response;
    const answer = [route.answer, route.otherAnswer].find((declared) => declared?.status === response.status);
    expect(answer, `${route.operationId} answered ${response.status}`).toBeDefined();
    if (answer?.schema && response.headers.get('content-type')?.startsWith('application/json')) {
      const parsed = safeParse(answer.schema, await response.clone().json());
      expect(parsed.error, `${route.operationId}'s answer against its declared schema`).toBeUndefined();
    }
    return response;
  };
  return { ...handler, fetch };
}
