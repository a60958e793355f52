#!/usr/bin/env node
/**
 * What the SDK costs in a browser bundle: the built package bundled by esbuild for the browser
 * (the options of scripts/browser-build.mjs), minified, then gzipped (level 9). Two views:
 *  - each entry point whole: its built file as the bundle's entry, every export kept, which is
 *    what a page without tree-shaking loads (the theme entry so built is the very file served
 *    at /sdk/v1/theme.js);
 *  - one client imported by name, which is what a bundler that tree-shakes keeps.
 *   node packages/sdk/scripts/size.mjs        prints a table
 * measureBundles() is also what the size test asserts on, and the README's figures come from it.
 */
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { BROWSER_BUILD } from './browser-build.mjs';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');

/** The package's entry points, as its exports map names them, and the built file each resolves to. */
export const ENTRY_FILES = {
  '@svc/sdk': 'index.js',
  '@svc/sdk/theme': 'theme.js',
  '@svc/sdk/webhooks': 'webhooks.js',
  '@svc/sdk/licenses': 'licenses.js',
};

const named = (entry, names) => `import { ${names} } from "${entry}"; globalThis.sdk = { ${names} };`;

/** One client by name, tree-shaken. */
const NAMED = {
  theme: named('@svc/sdk', 'createThemeClient'),
  customer: named('@svc/sdk', 'createCustomerClient'),
  'theme + customer': named('@svc/sdk', 'createThemeClient, createCustomerClient'),
  licenses: named('@svc/sdk', 'createLicenseClient'),
  webhooks: named('@svc/sdk', 'constructEvent, verifySignature'),
  merchant: named('@svc/sdk', 'createMerchantClient'),
};

/** An entry's name in the source above, as the built file it resolves to (exact names only). */
const resolveEntries = (contents) =>
  contents.replace(/"(@svc\/sdk(?:\/\w+)?)"/g, (_, entry) => JSON.stringify(join(DIST, ENTRY_FILES[entry])));

const measure = (name, code) => ({ name, minified: code.byteLength, gzip: gzipSync(code, { level: 9 }).byteLength });

export async function measureBundles() {
  const results = [];
  for (const [entry, file] of Object.entries(ENTRY_FILES)) {
    const out = await build({ ...BROWSER_BUILD, entryPoints: [join(DIST, file)] });
    results.push(measure(entry, out.outputFiles[0].contents));
  }
  for (const [name, contents] of Object.entries(NAMED)) {
    const out = await build({
      ...BROWSER_BUILD,
      stdin: { contents: resolveEntries(contents), resolveDir: DIST, loader: 'js' },
    });
    results.push(measure(name, out.outputFiles[0].contents));
  }
  return results;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  console.log('| import | minified | min + gzip |\n| --- | --- | --- |');
  for (const r of await measureBundles()) console.log(`| ${r.name} | ${kb(r.minified)} | ${kb(r.gzip)} |`);
}
