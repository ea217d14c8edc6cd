// The console builds to static files under dist/, served by the gateway at /console/.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The gateway's Content-Security-Policy allows no inline script, so nothing may be inlined as a data: URL either.
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 200,
  },
});
