#!/usr/bin/env node
/**
 * The storefront's cart module (client/storefront/cart.ts) with the SDK's theme client bundled in,
 * as one minified ES module at dist/public/storefront/cart.js, which svc serves at
 * /assets/storefront/cart.js. It runs after the SDK's build (turbo.json, `build:storefront`): the
 * SDK's types come from the server's router, so the server's own build cannot import the SDK.
 * The same esbuild options as the SDK's browser build (packages/sdk/scripts/browser-build.mjs).
 *   node scripts/build-storefront.mjs
 */
import { execFileSync } from 'node:child_process';
import { build } from 'esbuild';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BROWSER_BUILD } from '../../../packages/sdk/scripts/browser-build.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

// esbuild strips types without checking them: tsc checks first.
execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'client/storefront/tsconfig.json')], { stdio: 'inherit' });
const out = await build({
  ...BROWSER_BUILD,
  write: true,
  entryPoints: [join(ROOT, 'client/storefront/cart.ts')],
  outfile: join(ROOT, 'dist/public/storefront/cart.js'),
  metafile: true,
});
const bytes = Object.values(out.metafile.outputs)[0].bytes;
console.log(`dist/public/storefront/cart.js: ${bytes} bytes`);
