/**
 * The dashboard builds to static files that `svc serve` serves at /dashboard/ (apps/server/src/http/dashboard.ts):
 * hashed assets under /dashboard/assets/, and a manifest the size test reads. In development,
 * `npx vite` proxies the API to a running server (SVC_URL, default http://127.0.0.1:3000).
 */
import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const api = process.env.SVC_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  base: '/dashboard/',
  // Tailwind CSS 4 compiles src/styles.css at build time into one stylesheet: nothing is injected at run time.
  plugins: [react(), tailwindcss()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    manifest: true,
    // One module script and its imports: nothing inline, so the page's CSP is 'self' alone.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  server: { proxy: { '/trpc': api, '/api': api } },
});
