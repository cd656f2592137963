import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests run against the sources, so `npm test` needs no build first.
    alias: [
      { find: /^@deskpilot\/core\/demo$/, replacement: source('./packages/core/src/demo.ts') },
      { find: /^@deskpilot\/core\/node$/, replacement: source('./packages/core/src/node.ts') },
      { find: /^@deskpilot\/core\/testing$/, replacement: source('./packages/core/src/testing.ts') },
      { find: /^@deskpilot\/core\/openapi$/, replacement: source('./packages/core/src/openapi.ts') },
      { find: /^@deskpilot\/core\/storage$/, replacement: source('./packages/core/src/storage.ts') },
      { find: /^@deskpilot\/core\/session$/, replacement: source('./packages/core/src/session.ts') },
      { find: /^@deskpilot\/core\/chat$/, replacement: source('./packages/core/src/chat.ts') },
      { find: /^@deskpilot\/core\/team$/, replacement: source('./packages/core/src/team.ts') },
      { find: /^@deskpilot\/core\/proxy$/, replacement: source('./packages/core/src/proxy.ts') },
      { find: /^@deskpilot\/core\/module$/, replacement: source('./packages/core/src/module.ts') },
      { find: /^@deskpilot\/core\/routes$/, replacement: source('./packages/core/src/routes.ts') },
      { find: /^@deskpilot\/core\/chat-routes$/, replacement: source('./packages/core/src/chat-routes.ts') },
      { find: /^@deskpilot\/core$/, replacement: source('./packages/core/src/index.ts') },
      { find: /^@deskpilot\/session-express$/, replacement: source('./packages/session-express/src/index.ts') },
      { find: /^@deskpilot\/chat-express$/, replacement: source('./packages/chat-express/src/index.ts') },
      { find: /^@deskpilot\/postgres$/, replacement: source('./packages/postgres/src/index.ts') },
      { find: /^@deskpilot\/redis$/, replacement: source('./packages/redis/src/index.ts') },
      { find: /^@deskpilot\/smtp$/, replacement: source('./packages/smtp/src/index.ts') },
      { find: /^@deskpilot\/passkeys$/, replacement: source('./packages/passkeys/src/index.ts') },
      { find: /^@deskpilot\/passkeys\/testing$/, replacement: source('./packages/passkeys/src/testing.ts') },
      { find: /^@deskpilot\/sso$/, replacement: source('./packages/sso/src/index.ts') },
      { find: /^@deskpilot\/magic-link$/, replacement: source('./packages/magic-link/src/index.ts') },
      { find: /^@deskpilot\/magic-link\/routes$/, replacement: source('./packages/magic-link/src/routes.ts') },
      { find: /^@deskpilot\/scim$/, replacement: source('./packages/scim/src/index.ts') },
      { find: /^@deskpilot\/usage$/, replacement: source('./packages/usage/src/index.ts') },
      { find: /^@deskpilot\/evals$/, replacement: source('./packages/evals/src/index.ts') },
      { find: /^@deskpilot\/usage\/postgres$/, replacement: source('./packages/usage/src/postgres.ts') },
      { find: /^@deskpilot\/usage\/routes$/, replacement: source('./packages/usage/src/routes.ts') },
      { find: /^@deskpilot\/usage\/sqlite$/, replacement: source('./packages/usage/src/sqlite.ts') },
      { find: /^@deskpilot\/usage\/testing$/, replacement: source('./packages/usage/src/testing.ts') },
      { find: /^@deskpilot\/scim\/routes$/, replacement: source('./packages/scim/src/routes.ts') },
      { find: /^@deskpilot\/scim\/postgres$/, replacement: source('./packages/scim/src/postgres.ts') },
      { find: /^@deskpilot\/scim\/sqlite$/, replacement: source('./packages/scim/src/sqlite.ts') },
      { find: /^@deskpilot\/scim\/testing$/, replacement: source('./packages/scim/src/testing.ts') },
      { find: /^@deskpilot\/passkeys\/routes$/, replacement: source('./packages/passkeys/src/routes.ts') },
      { find: /^@deskpilot\/sso\/routes$/, replacement: source('./packages/sso/src/routes.ts') },
      { find: /^@deskpilot\/postgres\/testing$/, replacement: source('./packages/postgres/src/testing.ts') },
      { find: /^@deskpilot\/passkeys\/postgres$/, replacement: source('./packages/passkeys/src/postgres.ts') },
      { find: /^@deskpilot\/passkeys\/sqlite$/, replacement: source('./packages/passkeys/src/sqlite.ts') },
      { find: /^@deskpilot\/sso\/postgres$/, replacement: source('./packages/sso/src/postgres.ts') },
      { find: /^@deskpilot\/sso\/sqlite$/, replacement: source('./packages/sso/src/sqlite.ts') },
      { find: /^@deskpilot\/sso\/testing$/, replacement: source('./packages/sso/src/testing.ts') },
      { find: /^@deskpilot\/mcp$/, replacement: source('./packages/mcp/src/index.ts') },
      { find: /^@deskpilot\/sqlite$/, replacement: source('./packages/sqlite/src/index.ts') },
      { find: /^@deskpilot\/client$/, replacement: source('./packages/client/src/index.ts') },
    ],
  },
  test: {
    testTimeout: 20_000,
    // Two files at a time (vitest takes one less than the cores: one on a two-core machine). The suites
    // are built to share a machine: each Postgres file has a schema of its own, Redis keys a prefix of
    // their own, servers ephemeral ports. It takes the whole run from about 11 to about 8 minutes here.
    maxWorkers: 2,
    // `expect.poll` waits for what a server or a page does next (a login costs one scrypt): on a
    // loaded shared machine that takes seconds, not the default one. Passing runs wait no longer.
    expect: { poll: { timeout: 15_000 } },
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          include: [
            'packages/*/src/**/*.test.ts',
            'examples/*/src/**/*.test.ts',
            'examples/*/test/**/*.test.ts',
            'scripts/**/*.test.ts',
          ],
        },
      },
      {
        // The Express adapters' suites again on Express 4 (the peer range is `^4.21 || ^5`): the
        // adapters import only Express's types, so the apps the tests build decide the version.
        extends: true,
        resolve: { alias: [{ find: /^express$/, replacement: 'express4' }] },
        test: {
          name: 'express4',
          include: ['packages/session-express/src/**/*.test.ts', 'packages/chat-express/src/**/*.test.ts'],
        },
      },
      {
        // Core's handler suites again with the Web globals of Vercel's Edge Runtime (Request, Response,
        // streams, crypto). It swaps globals only: Node's built-ins stay importable, which is why
        // `edge-compat.test.ts` also bundles core for a browser target and runs it in a bare context.
        extends: true,
        test: {
          name: 'edge-runtime',
          environment: 'edge-runtime',
          setupFiles: [source('./vitest.edge-runtime.setup.ts')],
          include: [
            'packages/core/src/**/create-{session,chat}-handler*.test.ts',
            'packages/core/src/session/session-token.test.ts',
            'packages/core/src/limiter/*.test.ts',
            'packages/core/src/http/{address-bucket,create-client-address-resolver,parse-ip-address}.test.ts',
            'packages/core/src/encoding/canonical-hash.test.ts',
          ],
        },
      },
    ],
  },
});
