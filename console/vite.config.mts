import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

/** The console: bundled once at build time into dist/console (served by src/console/routes.ts). */
export default defineConfig({
  root: here,
  base: '/',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // Hashed names under assets/: the server gives them a year of immutable caching.
    assetsDir: 'assets',
    target: 'es2022',
    chunkSizeWarningLimit: 2000,
    sourcemap: false,
  },
});
