import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

// Mutation testing (`npm run mutate`, stryker.config.json): the `node` project of vitest.config.ts,
// narrowed to core's own suites. Stryker's vitest runner then runs, per mutated file, only the
// suites that import it (`vitest related`), and per mutant only the tests that reached it.
export default defineConfig({
  resolve: base.resolve,
  test: {
    testTimeout: base.test?.testTimeout,
    expect: base.test?.expect,
    projects: [
      {
        extends: true,
        test: { name: 'node', include: ['packages/core/src/**/*.test.ts'] },
      },
    ],
  },
});
