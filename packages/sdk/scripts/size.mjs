#!/usr/bin/env node
/**
 * What each client costs in a browser bundle: the built package bundled by esbuild for the
 * browser with only that client imported, minified, then gzipped (level 9).
 *   node packages/sdk/scripts/size.mjs        prints a table
 * measureBundles() is also what the size test asserts on.
 */
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');

const ENTRIES = {
  theme: 'import { createThemeClient } from "@svc/sdk"; globalThis.sdk = { createThemeClient };',
  customer: 'import { createCustomerClient } from "@svc/sdk"; globalThis.sdk = { createCustomerClient };',
  'theme + customer':
    'import { createThemeClient, createCustomerClient } from "@svc/sdk"; globalThis.sdk = { createThemeClient, createCustomerClient };',
  licenses: 'import { createLicenseClient } from "@svc/sdk"; globalThis.sdk = { createLicenseClient };',
  webhooks:
    'import { constructEvent, verifySignature } from "@svc/sdk"; globalThis.sdk = { constructEvent, verifySignature };',
  everything: 'import * as sdk from "@svc/sdk"; globalThis.sdk = sdk;',
};

export async function measureBundles() {
  const results = [];
  for (const [name, contents] of Object.entries(ENTRIES)) {
    const out = await build({
      stdin: { contents, resolveDir: process.cwd(), loader: 'js' },
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
      alias: { '@svc/sdk': dist },
    });
    const code = out.outputFiles[0].contents;
    results.push({ name, minified: code.byteLength, gzip: gzipSync(code, { level: 9 }).byteLength });
  }
  return results;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  console.log('| import | minified | min + gzip |\n| --- | --- | --- |');
  for (const r of await measureBundles()) console.log(`| ${r.name} | ${kb(r.minified)} | ${kb(r.gzip)} |`);
}
