import type { NextConfig } from 'next';
import { fileURLToPath } from 'node:url';

// The recipe imports the suite's shared setup from outside this folder: the repository is the root.
const root = fileURLToPath(new URL('../../..', import.meta.url));

const config: NextConfig = {
  turbopack: { root },
  outputFileTracingRoot: root,
};

export default config;
