import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests run against the sources, so `npm test` needs no build first.
    alias: [
      { find: /^@deskpilot\/core\/testing$/, replacement: source('./packages/core/src/testing.ts') },
      { find: /^@deskpilot\/core$/, replacement: source('./packages/core/src/index.ts') },
      { find: /^@deskpilot\/session-express$/, replacement: source('./packages/session-express/src/index.ts') },
      { find: /^@deskpilot\/chat-express$/, replacement: source('./packages/chat-express/src/index.ts') },
      { find: /^@deskpilot\/postgres$/, replacement: source('./packages/postgres/src/index.ts') },
      { find: /^@deskpilot\/redis$/, replacement: source('./packages/redis/src/index.ts') },
    ],
  },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'examples/*/src/**/*.test.ts', 'examples/*/test/**/*.test.ts', 'scripts/**/*.test.ts'],
    testTimeout: 20_000,
  },
});
