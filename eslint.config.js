// The architecture, enforced (CONTRIBUTING.md, "Style": layout and boundaries): core and the stores stay free of
// Express and `node:http`, core depends on nothing of ours, core's folders import only lower layers,
// no package reaches into another's `src`,
// and examples, bench and scripts import published entry points only. typescript-eslint's
// `recommended` set (syntax only, no type information, so lint stays fast) runs everywhere.
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import coreLayers from './scripts/eslint-core-layers.js';

const tests = ['**/*.test.ts', '**/*.test-support.ts'];

/** Another package's sources, by relative path (`../../core/src/…`) or through `packages/`. */
const otherPackageSources = {
  regex: '^(\\.\\./)+[^./][^/]*/src(/|$)|(^|/)packages/',
  message: 'Import another package by its published name (`@deskpilot/core`), never its sources.',
};

/** Files inside a package rather than one of its published entries (`@deskpilot/core/src/…`). */
const deepImports = {
  regex: '^@deskpilot/[^/]+/((src|dist|lib)(/|$)|[^/]+/)',
  message: 'Import a published entry (`@deskpilot/core`, `@deskpilot/core/testing`, …), never files inside a package.',
};

/** What only an HTTP host may use: a core or a store that needs it has an adapter's logic in it. */
const hostOnly = ['express', 'cors', 'http', 'https', 'http2', 'node:http', 'node:https', 'node:http2'].map((name) => ({
  name,
  message: 'Core and the stores speak `Request`/`Response`: Express and node:http belong in an adapter.',
}));
const hostOnlySubpaths = {
  group: ['express/*', 'cors/*'],
  message: 'Core and the stores speak `Request`/`Response`: Express belongs in an adapter.',
};

/** Our own packages: core depends on nothing of ours. */
const ourPackages = {
  group: ['@deskpilot/*'],
  message: 'Core depends on no other Deskpilot package.',
};

/** One `no-restricted-imports` setting (a later config object replaces, not merges, the rule's options). */
const restrictImports = ({ paths = [], patterns = [] }) => ({
  'no-restricted-imports': ['error', { paths, patterns: [otherPackageSources, deepImports, ...patterns] }],
});

export default defineConfig(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/.next/**',
      '**/next-env.d.ts',
      'coverage/**',
      'bench/results/**',
      'test-results/**',
      '.changeset/**',
      'docs/**',
      '.stryker-tmp/**',
      'reports/**',
    ],
  },
  tseslint.configs.recommended,
  {
    rules: {
      // The compiler reports unused names (`noUnusedLocals`, `noUnusedParameters`; `_` marks a fixed signature).
      '@typescript-eslint/no-unused-vars': 'off',
    },
  },
  {
    files: ['packages/*/src/**', 'examples/**', 'bench/**', 'scripts/**'],
    rules: restrictImports({}),
  },
  {
    files: ['packages/postgres/src/**', 'packages/redis/src/**', 'packages/sqlite/src/**', 'packages/smtp/src/**'],
    ignores: tests,
    rules: restrictImports({ paths: hostOnly, patterns: [hostOnlySubpaths] }),
  },
  {
    files: ['packages/core/src/**'],
    ignores: tests,
    rules: restrictImports({ paths: hostOnly, patterns: [hostOnlySubpaths, ourPackages] }),
  },
  {
    // Core's own tests may start a real `node:http` server, but use no Express and reach core by relative path.
    files: tests.map((glob) => `packages/core/src/${glob}`),
    rules: restrictImports({
      paths: hostOnly.filter(({ name }) => !name.includes('http')),
      patterns: [hostOnlySubpaths, ourPackages],
    }),
  },
  {
    // Core's folders in layers: each imports only folders below it (scripts/eslint-core-layers.js).
    files: ['packages/core/src/**/*.ts'],
    ignores: tests,
    plugins: { deskpilot: coreLayers },
    rules: { 'deskpilot/core-layers': 'error' },
  },
  {
    // No function longer than 100 lines of 120 columns (it was 80 of 170: about the same code in
    // fewer characters): a longer one is steps that want names. Tests and the conformance suites
    // (lists of `it`s) are exempt.
    files: ['packages/*/src/**/*.ts'],
    ignores: [...tests, 'packages/core/src/testing/**'],
    rules: { 'max-lines-per-function': ['error', { max: 100, skipBlankLines: true, skipComments: true }] },
  },
  {
    // Packages report through an injectable logger (core's `Logger`), never straight to the console.
    files: ['packages/*/src/**'],
    ignores: tests,
    rules: { 'no-console': 'error' },
  },
);
