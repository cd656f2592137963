import { readFileSync } from 'node:fs';
import { chatOpenApi, sessionOpenApi } from '@deskpilot/core/openapi';
import { magicLinkRoutes } from '@deskpilot/magic-link';
import { passkeyRoutes } from '@deskpilot/passkeys';
import { scimRoutes } from '@deskpilot/scim';
import { ssoConnectionRoutes, ssoRoutes } from '@deskpilot/sso';
import { describe, expect, it } from 'vitest';

// The route tables of core's README, checked against the routes as declared (through the OpenAPI
// documents derived from the declarations): a route added, moved or removed fails here until its
// row is written, moved or removed.
const readmeOf = (folder: string) => readFileSync(new URL(`../packages/${folder}/README.md`, import.meta.url), 'utf8');
const readme = readmeOf('core');

/** `METHOD /path` of each table row that starts with a method, its query and `…` left out. */
function documentedRows(prefix: string, text = readme): string[] {
  return [...text.matchAll(/^\| (GET|POST|DELETE) \| `([^`]+)` \|/gm)]
    .map(([, method, path]) => `${method} ${path!.split('?')[0]}`)
    .filter((row) => row.split(' ')[1]!.startsWith(prefix));
}

/** `METHOD /path` of each operation of a document, in the declarations' path syntax. */
function declaredOperations(document: Record<string, unknown>): string[] {
  return Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
  );
}

describe("core's README route tables", () => {
  it('list every session route as declared, once', () => {
    const rows = documentedRows('/sessions');
    expect(rows.filter((row, index) => rows.indexOf(row) !== index)).toEqual([]);
    expect([...rows].sort()).toEqual(declaredOperations(sessionOpenApi()).sort());
  });

  it('list every chat route as declared, once', () => {
    const rows = documentedRows('/chat');
    expect(rows.filter((row, index) => rows.indexOf(row) !== index)).toEqual([]);
    expect([...rows].sort()).toEqual(declaredOperations(chatOpenApi()).sort());
  });

  it.each([
    ['passkeys', passkeyRoutes],
    ['sso', { ...ssoRoutes, ...ssoConnectionRoutes }],
    ['magic-link', magicLinkRoutes],
    ['scim', scimRoutes],
  ])("the %s package's README lists its routes as declared, once", (folder, routes) => {
    const rows = documentedRows('/sessions', readmeOf(folder));
    expect(rows.filter((row, index) => rows.indexOf(row) !== index)).toEqual([]);
    const declared = declaredOperations(sessionOpenApi({ routes: Object.values(routes) }));
    expect([...rows].sort()).toEqual(declared.sort());
  });
});
