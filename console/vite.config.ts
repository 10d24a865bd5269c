/**
 * The admin console's build: `vite build --config console/vite.config.ts` writes `dist/console/`,
 * which sluice serves at `/console` (src/http/console.ts). Everything is bundled (no CDN): Preact,
 * the styles and `sluice/client` from src/client.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  // JSX through Preact's automatic runtime, as console/tsconfig.json says for the type checker.
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console/', import.meta.url)),
    emptyOutDir: true,
    // Every asset a file of its own: the CSP allows no inline script or style.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
  logLevel: 'warn',
});
