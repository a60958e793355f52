#!/usr/bin/env node
/**
 * The theme client for pages without a bundler: the built `@svc/sdk/theme` entry (dist/theme.js)
 * bundled into one self-contained ES module for browsers and minified, at dist/browser/theme.js.
 * The service serves these bytes at /sdk/v1/theme.js (apps/server/src/http/sdk-script.ts), and
 * scripts/size.mjs measures the theme entry the same way, so the README's figure is this file's.
 *   node scripts/browser-build.mjs     (the last step of `npm run build`)
 */
import { build } from 'esbuild';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');

/** The options both this build and the size measurement use: browser, ES2022, one minified ES module. */
export const BROWSER_BUILD = {
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  write: false,
  legalComments: 'none',
};

export async function buildBrowserTheme() {
  const out = await build({ ...BROWSER_BUILD, entryPoints: [join(DIST, 'theme.js')] });
  const code = out.outputFiles[0].contents;
  await mkdir(join(DIST, 'browser'), { recursive: true });
  await writeFile(join(DIST, 'browser', 'theme.js'), code);
  return code;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const code = await buildBrowserTheme();
  console.log(`dist/browser/theme.js: ${code.byteLength} bytes`);
}
