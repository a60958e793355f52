/**
 * What the SDK costs a browser (docs/architecture.md, Who uses svc: themes ship @svc/sdk to browsers): each entry point
 * imported whole and one client imported by name, bundled for the browser, minified and gzipped
 * (packages/sdk/scripts/size.mjs). Each entry stays under its budget, a subpath costs less than
 * the root, the file the service serves at /sdk/v1/theme.js is the theme entry so measured, and
 * the README's figures are the measured ones.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs script without declarations
import { measureBundles } from '../packages/sdk/scripts/size.mjs';
import { REPO_ROOT } from './support/server.js';

interface Measured {
  name: string;
  minified: number;
  gzip: number;
}

const KB = 1024;

/** Gzip budgets of each entry point imported whole. */
const ENTRY_BUDGETS: Record<string, number> = {
  '@svc/sdk/theme': 10 * KB,
  '@svc/sdk/licenses': 10 * KB,
  '@svc/sdk/webhooks': 4 * KB,
  '@svc/sdk': 16 * KB,
};

/** The figure the README's entry-point table states for an entry (its last column), in bytes. */
function statedGzip(readme: string, entry: string): number {
  const row = readme.split('\n').find((line) => line.startsWith(`| \`${entry}\` `));
  const figure = row && /([\d.]+) KB\s*\|\s*$/.exec(row);
  if (!figure) throw new Error(`The README's entry-point table has no size for ${entry}`);
  return Number(figure[1]) * KB;
}

describe('@svc/sdk bundle size', () => {
  it('each entry point under its budget, a subpath well under the root, one client under the whole', async () => {
    const sizes = new Map(((await measureBundles()) as Measured[]).map((m) => [m.name, m]));
    for (const [entry, budget] of Object.entries(ENTRY_BUDGETS))
      expect(sizes.get(entry)!.gzip, entry).toBeLessThan(budget);
    for (const entry of ['@svc/sdk/theme', '@svc/sdk/licenses', '@svc/sdk/webhooks'])
      expect(sizes.get(entry)!.gzip, entry).toBeLessThan(sizes.get('@svc/sdk')!.gzip * 0.75);
    expect(sizes.get('theme + customer')!.gzip).toBeLessThan(15 * KB);
    // Tree-shaking works: one client costs less than the whole package, webhooks less than a client.
    expect(sizes.get('theme')!.minified).toBeLessThan(sizes.get('@svc/sdk')!.minified);
    expect(sizes.get('webhooks')!.minified).toBeLessThan(sizes.get('theme')!.minified);
  });

  it('serves at /sdk/v1/theme.js the theme entry as measured, and the README states the measured figures', async () => {
    const sizes = new Map(((await measureBundles()) as Measured[]).map((m) => [m.name, m]));
    const served = await readFile(path.join(REPO_ROOT, 'packages/sdk/dist/browser/theme.js'));
    expect(served.byteLength).toBe(sizes.get('@svc/sdk/theme')!.minified);
    expect(gzipSync(served, { level: 9 }).byteLength).toBe(sizes.get('@svc/sdk/theme')!.gzip);

    const readme = await readFile(path.join(REPO_ROOT, 'packages/sdk/README.md'), 'utf8');
    for (const entry of Object.keys(ENTRY_BUDGETS)) {
      // Stated to a tenth of a KB; a change of the code that moves it by more must update the README.
      expect(Math.abs(statedGzip(readme, entry) - sizes.get(entry)!.gzip), entry).toBeLessThanOrEqual(0.25 * KB);
    }
  });
});
