/**
 * The dashboard builds to static files that `svc serve` serves at /dashboard/ (apps/server/src/http/dashboard.ts):
 * hashed assets under /dashboard/assets/, each text file with its gzip and brotli encodings beside
 * it (`.gz`, `.br`), and a manifest the size test reads. In development, `npx vite` proxies the API
 * to a running server (SVC_URL, default http://127.0.0.1:3000).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * Writes each text file of the build (over 1 KB) compressed beside it, at the strongest settings,
 * once here rather than on every start of the server: brotli at quality 11 takes about 1.5 s of CPU
 * for the whole build. The server sends these bytes as they are.
 */
function precompress(): Plugin {
  return {
    name: 'svc-precompress',
    apply: 'build',
    async writeBundle(options, bundle) {
      const dir = options.dir ?? 'dist';
      const writes = Object.values(bundle)
        .filter((file) => /\.(js|css|html|svg)$/.test(file.fileName))
        .map((file) => ({
          path: join(dir, file.fileName),
          body: Buffer.from(file.type === 'chunk' ? file.code : file.source),
        }))
        .filter(({ body }) => body.length > 1024)
        .map(async ({ path, body }) => {
          const [gz, br] = await Promise.all([
            gzipAsync(body, { level: 9 }),
            brotliAsync(body, {
              params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length },
            }),
          ]);
          await Promise.all([writeFile(`${path}.gz`, gz), writeFile(`${path}.br`, br)]);
        });
      await Promise.all(writes);
    },
  };
}

const api = process.env.SVC_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  base: '/dashboard/',
  // Tailwind CSS 4 compiles src/styles.css at build time into one stylesheet: nothing is injected at run time.
  plugins: [react(), tailwindcss(), precompress()],
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
