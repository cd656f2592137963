// One JavaScript build recipe for every published package. Run from a package folder
// (`tsup --config ../../tsup.config.ts`): entries and externals come from that
// package's own manifest, so its dependencies are never inlined into dist.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'tsup';

const manifest = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as {
  exports: Record<string, unknown>;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};

const entry = Object.keys(manifest.exports)
  .filter((subpath) => subpath !== './package.json')
  .map((subpath) => (subpath === '.' ? 'src/index.ts' : `src/${subpath.slice(2)}.ts`))
  // Command-line entries (`bin`): `./dist/cli.js` is built from `src/cli.ts`.
  .concat(
    Object.values(manifest.bin ?? {}).map((file) => `src/${file.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts')}`),
  );

const external = [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})].map(
  (name) => new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(/.*)?$`),
);

export default defineConfig({
  entry,
  format: ['esm'],
  target: 'node22',
  platform: 'node',
  // Declarations come from TypeScript 7's own `tsc` (see each package's tsconfig.build.json):
  // tsup's dts step needs the compiler API, which TypeScript 7 does not ship.
  dts: false,
  sourcemap: true,
  clean: true,
  splitting: true,
  // esbuild's own tree shaking: smaller output than Rollup's pass here, and a build that peaks at
  // 100 MiB less (bench/platform-memory: `npm start` builds first on a newcomer's machine).
  treeshake: false,
  external,
  // `node:sqlite` exists only under its `node:` name: keep the prefix on every built-in import.
  removeNodeProtocol: false,
});
