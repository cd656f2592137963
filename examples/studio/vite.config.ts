import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The page lives in web/ and builds to dist/, which the studio server serves.
export default defineConfig({
  root: 'web',
  plugins: [react()],
  build: { outDir: '../dist', emptyOutDir: true },
});
