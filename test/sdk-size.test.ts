/**
 * The theme client's cost in a storefront's bundle (DESIGN §1: themes ship @svc/sdk to
 * browsers): the built package bundled for the browser with only that client imported,
 * minified and gzipped, stays under 15 KB; and importing a client does not drag in the rest.
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs script without declarations
import { measureBundles } from '../packages/sdk/scripts/size.mjs';

interface Measured {
  name: string;
  minified: number;
  gzip: number;
}

describe('@svc/sdk bundle size', () => {
  it('theme client under 15 KB min+gzip; webhook verification alone smaller than any client', async () => {
    const sizes = new Map(((await measureBundles()) as Measured[]).map((m) => [m.name, m]));
    expect(sizes.get('theme')!.gzip).toBeLessThan(15 * 1024);
    expect(sizes.get('theme + customer')!.gzip).toBeLessThan(15 * 1024);
    // Tree-shaking works: one client costs less than the whole package, webhooks less than a client.
    expect(sizes.get('theme')!.minified).toBeLessThan(sizes.get('everything')!.minified);
    expect(sizes.get('webhooks')!.minified).toBeLessThan(sizes.get('theme')!.minified);
  });
});
