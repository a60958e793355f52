/**
 * Black-box, over HTTP: the hosted storefront's pages (/s/<subdomain>, its products, its cart):
 * the house CSP, SEO and sharing tags, JSON-LD on a product page, only active products, `Sold out`
 * without a button, an ETag with 304 on revalidation that changes when the catalog does, the page
 * of a banned or unknown store, escaping of what sellers type, and the transfer budget (each
 * page's HTML, CSS and JS at most 30 KB gzip).
 */
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

let server: Awaited<ReturnType<typeof startServer>>;
let db: pg.Client;
let seller: Seller;
let store: { id: string; subdomain: string };
let keyed: { id: string; slug: string };
let soldOut: { id: string; slug: string };
let manual: { id: string; slug: string };
let draft: { id: string };

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.url}${path}`, { headers });

beforeAll(async () => {
  server = await startServer({ PUBLIC_URL: 'https://shop.example.test' });
  db = new pg.Client({ connectionString: server.db.url });
  await db.connect();
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller, 'Nebula <Games> & Co');
  keyed = await createProduct(seller, store.id, {
    name: 'Starship <script>alert(1)</script>',
    price: 19.99,
    description: 'Fly far.\n\nSteam key for "Starship".',
    deliveryMethods: ['licenseKeys'],
  });
  await importKeys(seller, store.id, keyed.id, [`SF-${randomBytes(4).toString('hex')}`]);
  soldOut = await createProduct(seller, store.id, {
    name: 'Moon Racer',
    price: 5,
    deliveryMethods: ['licenseKeys'],
  });
  manual = await createProduct(seller, store.id, {
    name: 'Logo design',
    price: 120,
    deliveryMethods: ['manualDelivery'],
  });
  draft = await createProduct(seller, store.id, { name: 'Secret draft', status: 'draft' });
});
afterAll(async () => {
  await db?.end();
  await server?.stop();
});

describe('the store page', () => {
  it('lists the active products with Intl prices, Sold out without a button, and the house headers', async () => {
    const response = await get(`/s/${store.subdomain}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('etag')).toMatch(/^"[\w.-]+"$/);
    const html = await response.text();

    expect(html).toContain('<title>Nebula &lt;Games&gt; &amp; Co</title>');
    expect(html).toContain(`<link rel="canonical" href="https://shop.example.test/s/${store.subdomain}">`);
    expect(html).toContain('<meta property="og:type" content="website">');
    expect(html).toContain(`<meta property="og:url" content="https://shop.example.test/s/${store.subdomain}">`);
    expect(html).toMatch(/<meta name="description" content="[^"]+">/);

    expect(html).toContain(`href="/s/${store.subdomain}/products/${keyed.slug}"`);
    expect(html).toContain(`href="/s/${store.subdomain}/products/${manual.slug}"`);
    expect(html).toContain('$19.99');
    expect(html).toContain('$120.00');
    expect(html).not.toContain('Secret draft');
    expect(html).not.toContain(draft.id);
    // Seller text is escaped everywhere, never markup.
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('Starship &lt;script&gt;alert(1)&lt;/script&gt;');
    // No script on the store page, and none inline.
    expect(html).not.toMatch(/<script(?! type="application\/ld\+json")/);

    const card = (id: string) =>
      html.slice(html.indexOf(`/products/${id}"`), html.indexOf('</li>', html.indexOf(`/products/${id}"`)));
    expect(card(soldOut.slug)).toContain('Sold out');
    expect(card(soldOut.slug)).not.toContain('<button');
    expect(card(keyed.slug)).not.toContain('Sold out');
    expect(card(keyed.slug)).toContain(`<input type="hidden" name="add" value="${keyed.id}">`);
    expect(card(keyed.slug)).toContain('Add to cart');
  });

  it('answers 304 to its ETag, and a new ETag once the catalog or the stock changes', async () => {
    const other = await createStoreFor(seller, 'Etag Shop');
    const product = await createProduct(seller, other.id, { name: 'Key', deliveryMethods: ['licenseKeys'] });
    const first = await get(`/s/${other.subdomain}`);
    const etag = first.headers.get('etag')!;
    expect(await first.text()).toContain('Sold out');

    const again = await get(`/s/${other.subdomain}`, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    expect(await again.text()).toBe('');
    // No policy on the 304: a browser merges its headers into the page it keeps, and the page's
    // own policy (its 200's) must stay (a `default-src 'none'` here left the page unstyled).
    expect(again.headers.get('content-security-policy')).toBeNull();
    expect(again.headers.get('cache-control')).toBe(first.headers.get('cache-control'));
    expect((await get(`/s/${other.subdomain}`, { 'if-none-match': `W/${etag}, "x"` })).status).toBe(304);

    // Keys arrive: the product is no longer sold out, though the product row did not change.
    await importKeys(seller, other.id, product.id, [`E-${randomBytes(4).toString('hex')}`]);
    const restocked = await get(`/s/${other.subdomain}`, { 'if-none-match': etag });
    expect(restocked.status).toBe(200);
    expect(await restocked.text()).not.toContain('Sold out');
    const etag2 = restocked.headers.get('etag')!;
    expect(etag2).not.toBe(etag);

    // A product renamed: a new ETag again.
    const renamed = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${other.id}/products/${product.id}`, {
      name: 'Renamed key',
    });
    expect(renamed.status).toBe(200);
    const changed = await get(`/s/${other.subdomain}`, { 'if-none-match': etag2 });
    expect(changed.status).toBe(200);
    expect(await changed.text()).toContain('Renamed key');

    // The product page and the cart page revalidate the same way.
    for (const path of [`/s/${other.subdomain}/products/${product.id}`, `/s/${other.subdomain}/cart`]) {
      const page = await get(path);
      expect(page.status).toBe(200);
      const tag = page.headers.get('etag')!;
      expect(tag).toBeTruthy();
      const revalidated = await get(path, { 'if-none-match': tag });
      expect(revalidated.status).toBe(304);
      expect(revalidated.headers.get('content-security-policy'), path).toBeNull();
    }
  });

  it('answers 404 with a page saying the store is not available, for an unknown or banned store', async () => {
    const banned = await createStoreFor(seller, 'Banned Shop');
    await db.query('update store set banned = true, updated_at = now() where id = $1', [banned.id]);
    for (const path of [
      '/s/no-such-store-here',
      `/s/${banned.subdomain}`,
      `/s/${banned.subdomain}/cart`,
      `/s/${banned.subdomain}/products/${keyed.id}`,
      '/s/%3Cbad%3E',
    ]) {
      const response = await get(path);
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('content-security-policy')).toBe(PAGE_CSP);
      expect(await response.text()).toContain('This store is not available.');
    }
  });
});

describe('a product page', () => {
  it('shows the product with JSON-LD Product + Offer, delivery kinds and a quantity form to the cart', async () => {
    const response = await get(`/s/${store.subdomain}/products/${keyed.id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBeTruthy();
    const html = await response.text();
    expect(html).toContain(
      '<title>Starship &lt;script&gt;alert(1)&lt;/script&gt; · Nebula &lt;Games&gt; &amp; Co</title>',
    );
    expect(html).toContain('<meta property="og:type" content="product">');
    expect(html).toContain(
      `<link rel="canonical" href="https://shop.example.test/s/${store.subdomain}/products/${keyed.slug}">`,
    );
    expect(html).toContain('<p>Fly far.</p>');
    expect(html).toContain('Steam key for &quot;Starship&quot;.');
    expect(html).toContain('A license key');
    expect(html).toContain(`<form class="add-to-cart" method="get" action="/s/${store.subdomain}/cart">`);
    expect(html).toMatch(/<input id="quantity" name="quantity" type="number"[^>]* min="1"/);
    expect(html).not.toContain('<script>alert(1)</script>');

    const ld = /<script type="application\/ld\+json">(.*?)<\/script>/s.exec(html);
    expect(ld).not.toBeNull();
    const data = JSON.parse(ld![1]!);
    expect(data).toMatchObject({
      '@context': 'https://schema.org',
      '@type': 'Product',
      name: 'Starship <script>alert(1)</script>',
      offers: {
        '@type': 'Offer',
        price: '19.99',
        priceCurrency: 'USD',
        availability: 'https://schema.org/InStock',
      },
    });
    // The name's markup is in the JSON only as escapes: nothing can end the script element.
    expect(ld![1]).not.toContain('</script');
  });

  it("offers a recurring product's active plans with their saving and trial, and one Offer per plan", async () => {
    const recurring = await createProduct(seller, store.id, {
      name: 'Editor Pro',
      price: 9,
      plans: [
        { interval: 'month', price: 9, trialDays: 7 },
        { interval: 'year', price: 90 },
        { interval: 'month', intervalCount: 3, price: 25 },
        { interval: 'week', price: 3, active: false },
      ],
    });
    const plans = recurring.plans as Array<{ id: string; active: boolean }>;
    const html = await (await get(`/s/${store.subdomain}/products/${recurring.id}`)).text();
    expect(html).toMatch(/<p class="price">\$9\.00 \/ month<\/p>/);
    // A radio group of the add-to-cart form: the first plan chosen, its trial as its description.
    const form = /<form class="add-to-cart"[\s\S]*?<\/form>/.exec(html)![0];
    expect(form).toContain('<legend>Plan</legend>');
    const radios = [
      ...form.matchAll(
        /<input type="radio" name="planId" id="([^"]+)" value="([^"]+)"[^>]*>\s*<label for="\1">([^<]+)<\/label>/g,
      ),
    ];
    expect(radios.map((radio) => radio[3])).toEqual([
      '$9.00 / month',
      '$90.00 / year · save 17 %',
      '$25.00 every 3 months',
    ]);
    expect(radios.map((radio) => radio[2])).toEqual(plans.slice(0, 3).map((plan) => plan.id));
    expect(radios[0]![0]).toContain(' checked');
    expect(form).toMatch(/<p class="hint" id="plan-[^"]+-trial">7-day free trial<\/p>/);
    // The archived plan is never offered.
    expect(html).not.toContain(plans[3]!.id);
    expect(html).not.toContain('$3.00');
    const data = JSON.parse(/<script type="application\/ld\+json">(.*?)<\/script>/s.exec(html)![1]!);
    expect(data.offers).toHaveLength(3);
    expect(data.offers[0]).toMatchObject({
      '@type': 'Offer',
      price: '9.00',
      priceCurrency: 'USD',
      priceSpecification: [
        {
          '@type': 'UnitPriceSpecification',
          price: '0.00',
          priceCurrency: 'USD',
          billingDuration: { '@type': 'QuantitativeValue', value: 7, unitCode: 'DAY' },
        },
        {
          '@type': 'UnitPriceSpecification',
          price: '9.00',
          priceCurrency: 'USD',
          referenceQuantity: { '@type': 'QuantitativeValue', value: 1, unitCode: 'MON' },
        },
      ],
    });
    expect(data.offers[1].priceSpecification).toEqual({
      '@type': 'UnitPriceSpecification',
      price: '90.00',
      priceCurrency: 'USD',
      referenceQuantity: { '@type': 'QuantitativeValue', value: 1, unitCode: 'ANN' },
    });
    expect(data.offers[2].priceSpecification.referenceQuantity).toEqual({
      '@type': 'QuantitativeValue',
      value: 3,
      unitCode: 'MON',
    });
    // The store page's card shows the first plan's price and period too.
    expect(await (await get(`/s/${store.subdomain}`)).text()).toMatch(/\$9\.00 \/ month/);
  });

  it('says Sold out with no form and SoldOut in its offer', async () => {
    const html = await (await get(`/s/${store.subdomain}/products/${soldOut.id}`)).text();
    expect(html).toContain('<p class="sold-out">Sold out</p>');
    expect(html).not.toContain('Add to cart');
    expect(html).toContain('"availability":"https://schema.org/SoldOut"');
  });

  it('answers 404 for a draft, an unknown or another store’s product', async () => {
    const other = await createStoreFor(seller, 'Other Shop');
    const theirs = await createProduct(seller, other.id, { name: 'Theirs' });
    for (const id of [draft.id, 'nosuchproduct', theirs.id]) {
      const response = await get(`/s/${store.subdomain}/products/${id}`);
      expect(response.status, id).toBe(404);
      const html = await response.text();
      expect(html).toContain('Product not found');
      expect(html).not.toContain('Secret draft');
    }
  });
});

describe('the cart page', () => {
  it('loads the one cart module and says the cart needs JavaScript without it', async () => {
    const response = await get(`/s/${store.subdomain}/cart?add=${keyed.id}&quantity=2`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('<script type="module" src="/assets/storefront/cart.js"></script>');
    expect(html).toContain(`data-store-id="${store.id}"`);
    expect(html).toContain('<noscript>');
    const module = await get('/assets/storefront/cart.js');
    expect(module.status).toBe(200);
    expect(module.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await module.text()).toContain('svc-cart:');
  });
});

/** What a browser fetches for the page: the HTML, its stylesheets and its scripts, each gzip-compressed. */
async function transferBytes(path: string): Promise<{ total: number; parts: Record<string, number> }> {
  const html = await (await get(path)).text();
  const assets = [
    ...[...html.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((m) => m[1]!),
    ...[...html.matchAll(/<script type="module" src="([^"]+)">/g)].map((m) => m[1]!),
  ];
  const parts: Record<string, number> = { [path]: gzipSync(html, { level: 9 }).byteLength };
  for (const asset of assets) {
    const response = await get(asset);
    expect(response.status, asset).toBe(200);
    parts[asset] = gzipSync(Buffer.from(await response.arrayBuffer()), { level: 9 }).byteLength;
  }
  return { total: Object.values(parts).reduce((sum, n) => sum + n, 0), parts };
}

describe('the transfer budget', () => {
  it('keeps every page (HTML + CSS + JS, gzip) within 30 KB, for a store of 30 products', async () => {
    const big = await createStoreFor(seller, 'Budget Shop');
    const products = [];
    for (let i = 0; i < 30; i++)
      products.push(
        await createProduct(seller, big.id, {
          name: `Product number ${i} with a longer name`,
          price: 10 + i,
          description: 'A product description of a realistic length. '.repeat(8),
        }),
      );
    const pages = [
      `/s/${big.subdomain}`,
      `/s/${big.subdomain}/products/${products[0]!.id}`,
      `/s/${big.subdomain}/cart`,
    ];
    for (const path of pages) {
      const { total, parts } = await transferBytes(path);
      expect(Object.keys(parts).length, path).toBeGreaterThanOrEqual(3);
      expect(total, `${path}: ${JSON.stringify(parts)}`).toBeLessThanOrEqual(30 * 1024);
    }
  });
});

describe('a store of 1,000 products', () => {
  it('shows 24 products a page with Previous and Next, each page its own canonical and ETag, within 30 KB', async () => {
    const big = await createStoreFor(seller, 'Thousand Shop');
    // Straight into the table: 1,000 creates over HTTP would be most of the test's time. Each has
    // an image (two renditions), so the cards carry their srcset too.
    const image = (n: number) => [
      {
        id: `img${String(n).padStart(21, '0')}`,
        contentType: 'image/png',
        size: 1000,
        sha256: '0'.repeat(64),
        variants: [
          { width: 480, height: 360 },
          { width: 960, height: 720 },
        ],
      },
    ];
    const ids = Array.from({ length: 1000 }, (_, n) => `p${randomBytes(11).toString('hex').slice(0, 21)}${n % 10}`);
    await db.query(
      `insert into product (id, store_id, name, slug, description, price_minor, status, delivery_methods, images,
         created_at, updated_at)
       select id, $1, 'Product number ' || n || ' with a longer name', 'product-' || n,
         repeat('A product description of a realistic length. ', 8), 1000 + n, 'active', '{manualDelivery}',
         $2::jsonb -> (n - 1)::int, now() + n * interval '1 millisecond', now()
       from unnest($3::text[]) with ordinality as t(id, n)`,
      [big.id, JSON.stringify(ids.map((_, n) => image(n))), ids],
    );

    const first = await get(`/s/${big.subdomain}`);
    expect(first.status).toBe(200);
    const firstHtml = await first.text();
    expect(firstHtml.match(/<li class="product-card">/g)).toHaveLength(24);
    expect(firstHtml).toContain(`<link rel="canonical" href="https://shop.example.test/s/${big.subdomain}">`);
    expect(firstHtml).toContain(`<a rel="next" href="/s/${big.subdomain}?page=2">Next</a>`);
    expect(firstHtml).not.toContain('rel="prev"');
    expect(firstHtml).toContain('Page 1 of 42');

    // Following Next from the first page reaches every product once, and stops at the last page.
    const seen = new Set<string>();
    let path: string | undefined = `/s/${big.subdomain}`;
    const etags = new Set<string>();
    let pages = 0;
    while (path) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      etags.add(response.headers.get('etag')!);
      const html = await response.text();
      const canonical = `https://shop.example.test${path}`;
      expect(html, path).toContain(`<link rel="canonical" href="${canonical}">`);
      for (const m of html.matchAll(/<h2><a href="\/s\/[^/]+\/products\/([^"]+)">/g)) seen.add(m[1]!);
      pages += 1;
      path = /<a rel="next" href="([^"]+)">/.exec(html)?.[1]?.replace(/&amp;/g, '&');
    }
    expect(pages).toBe(42);
    expect(seen.size).toBe(1000);
    expect(etags.size).toBe(42);

    const last = await (await get(`/s/${big.subdomain}?page=42`)).text();
    expect(last.match(/<li class="product-card">/g)).toHaveLength(1000 - 41 * 24);
    expect(last).toContain(`<a rel="prev" href="/s/${big.subdomain}?page=41">Previous</a>`);
    expect(last).not.toContain('rel="next"');
    expect((await get(`/s/${big.subdomain}?page=43`)).status).toBe(404);

    // A page's own ETag revalidates to 304; another page's does not.
    const second = await get(`/s/${big.subdomain}?page=2`);
    const etag = second.headers.get('etag')!;
    expect((await get(`/s/${big.subdomain}?page=2`, { 'if-none-match': etag })).status).toBe(304);
    expect((await get(`/s/${big.subdomain}?page=3`, { 'if-none-match': etag })).status).toBe(200);

    for (const page of [`/s/${big.subdomain}`, `/s/${big.subdomain}?page=21`, `/s/${big.subdomain}?page=42`]) {
      const { total, parts } = await transferBytes(page);
      expect(total, `${page}: ${JSON.stringify(parts)}`).toBeLessThanOrEqual(30 * 1024);
    }
  });
});

describe('the store’s look and product slugs', () => {
  it('shows the description and the accent colour (an inline style its hash in the CSP allows)', async () => {
    const shop = await createStoreFor(seller, 'Look Shop');
    const bad = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${shop.id}`, { accentColor: 'red' });
    expect(bad.status).toBe(400);
    const tooLong = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${shop.id}`, {
      description: 'x'.repeat(2001),
    });
    expect(tooLong.status).toBe(400);
    const updated = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${shop.id}`, {
      description: 'Games & keys.\n\n<b>Fast</b> delivery.',
      accentColor: '#AA3300',
    });
    expect(updated.status, await updated.clone().text()).toBe(200);
    expect(await updated.json()).toMatchObject({
      description: 'Games & keys.\n\n<b>Fast</b> delivery.',
      accentColor: '#aa3300',
    });

    const response = await get(`/s/${shop.subdomain}`);
    const html = await response.text();
    expect(html).toContain('<p>Games &amp; keys.</p>');
    expect(html).toContain('&lt;b&gt;Fast&lt;/b&gt; delivery.');
    expect(html).toContain('<meta name="description" content="Games &amp; keys. &lt;b&gt;Fast&lt;/b&gt; delivery.">');
    // #aa3300 is AA on the light scheme's backgrounds, not on the dark one's: it is the light accent only.
    const accentCss =
      '@media (prefers-color-scheme:light){:root{--svc-accent:#aa3300;--svc-accent-hover:#912b00;--svc-accent-soft:#f5e7e0;--svc-focus:#aa3300}}';
    expect(html).toContain(`<style>${accentCss}</style>`);
    const { createHash } = await import('node:crypto');
    const hash = createHash('sha256').update(accentCss).digest('base64');
    expect(response.headers.get('content-security-policy')).toBe(
      PAGE_CSP.replace("style-src 'self'", `style-src 'self' 'sha256-${hash}'`),
    );

    const publicStore = await get(`/api/stores/by-subdomain/${shop.subdomain}/storefront`);
    expect((await publicStore.json()).store).toMatchObject({
      description: 'Games & keys.\n\n<b>Fast</b> delivery.',
      accentColor: '#aa3300',
    });

    // null goes back to the default: no inline style at all.
    await dashboard(seller, 'PATCH', `/api/dashboard/stores/${shop.id}`, { accentColor: null });
    const plain = await get(`/s/${shop.subdomain}`);
    expect(await plain.text()).not.toContain('<style>');
    expect(plain.headers.get('content-security-policy')).toBe(PAGE_CSP);
  });

  it('makes a unique slug from the name, answers the product page at it, and takes a slug the seller edits', async () => {
    const shop = await createStoreFor(seller, 'Slug Shop');
    const first = await createProduct(seller, shop.id, { name: 'Starship Game (Steam key)' });
    const second = await createProduct(seller, shop.id, { name: 'Starship game — Steam key!' });
    expect(first.slug).toBe('starship-game-steam-key');
    expect(second.slug).toBe('starship-game-steam-key-2');

    const page = await get(`/s/${shop.subdomain}/products/starship-game-steam-key`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(
      `<link rel="canonical" href="https://shop.example.test/s/${shop.subdomain}/products/starship-game-steam-key">`,
    );
    expect((await get(`/s/${shop.subdomain}/products/${first.id}`)).status).toBe(200);
    expect(await (await get(`/s/${shop.subdomain}`)).text()).toContain(
      `href="/s/${shop.subdomain}/products/starship-game-steam-key-2"`,
    );

    const path = `/api/dashboard/stores/${shop.id}/products/${second.id}`;
    expect((await dashboard(seller, 'PATCH', path, { slug: 'Not A Slug' })).status).toBe(400);
    expect((await dashboard(seller, 'PATCH', path, { slug: 'starship-game-steam-key' })).status).toBe(409);
    const renamed = await dashboard(seller, 'PATCH', path, { slug: 'starship-deluxe' });
    expect(renamed.status).toBe(200);
    expect((await renamed.json()).slug).toBe('starship-deluxe');
    expect((await get(`/s/${shop.subdomain}/products/starship-deluxe`)).status).toBe(200);
    expect((await get(`/s/${shop.subdomain}/products/starship-game-steam-key-2`)).status).toBe(404);
  });

  it('takes a PNG, JPEG or WebP logo up to 1 MB, shows it on the pages and serves it; refuses anything else', async () => {
    const shop = await createStoreFor(seller, 'Logo Shop');
    const upload = (bytes: Buffer, type = 'image/png') => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(bytes)], { type }), 'logo.png');
      return fetch(`${server.url}/api/dashboard/stores/${shop.id}/logo`, {
        method: 'POST',
        headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken },
        body: form,
      });
    };
    const png = await sharp({ create: { width: 40, height: 40, channels: 3, background: '#884422' } })
      .png()
      .toBuffer();
    expect((await upload(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'image/svg+xml')).status).toBe(415);
    expect((await upload(Buffer.concat([png, Buffer.alloc(1024 * 1024)]))).status).toBe(413);

    const uploaded = await upload(png);
    expect(uploaded.status, await uploaded.clone().text()).toBe(200);
    const { logoUrl } = await uploaded.json();
    expect(logoUrl).toMatch(new RegExp(`^/s/${shop.subdomain}/logo/\\w+$`));
    const html = await (await get(`/s/${shop.subdomain}`)).text();
    expect(html).toContain(`<img class="store-logo" src="${logoUrl}"`);
    expect(html).toContain(`<meta property="og:image" content="https://shop.example.test${logoUrl}">`);
    const served = await get(logoUrl);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    // The picture, encoded again (merchant-store.test.ts: what that leaves out).
    expect(await sharp(Buffer.from(await served.arrayBuffer())).metadata()).toMatchObject({
      format: 'png',
      width: 40,
      height: 40,
    });

    const removed = await dashboard(seller, 'DELETE', `/api/dashboard/stores/${shop.id}/logo`);
    expect(removed.status).toBe(204);
    expect(await (await get(`/s/${shop.subdomain}`)).text()).not.toContain('store-logo');
    expect((await get(logoUrl)).status).toBe(404);
  });
});

describe('Markdown descriptions', () => {
  it('renders a product’s Markdown on its page and as descriptionHtml, with no raw HTML, script link or image', async () => {
    const shop = await createStoreFor(seller, 'Markdown Shop');
    const description = [
      'An arcade racer across **twelve neon cities**.',
      '',
      '- Split-screen for four',
      '- Docs at https://example.com/docs',
      '',
      '<script>alert(1)</script> <img src=x onerror=alert(2)> [click](javascript:alert(3)) ![pixel](https://tracker.example/p.png)',
    ].join('\n');
    const product = await createProduct(seller, shop.id, { name: 'Racer', description });

    const html = await (await get(`/s/${shop.subdomain}/products/${product.slug}`)).text();
    const section = html.slice(html.indexOf('<section class="description"'), html.indexOf('</section>'));
    expect(section).toContain('<strong>twelve neon cities</strong>');
    expect(section).toContain('<li>Split-screen for four</li>');
    expect(section).toContain(
      '<a href="https://example.com/docs" rel="nofollow noopener">https://example.com/docs</a>',
    );
    expect(section).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    // Raw HTML is text, a javascript: link no link, an image no image (its address at most a link).
    expect(html).not.toMatch(/<script>alert|<img\b[^>]*(onerror|src=x|tracker)|href="javascript:/i);
    expect(section).not.toMatch(/<img\b/i);
    // What search engines and sharing read is the text, not the Markdown.
    expect(html).toContain('<meta name="description" content="An arcade racer across twelve neon cities.');
    expect(html).toContain('"description":"An arcade racer across twelve neon cities.');

    const listed = await (await get(`/api/stores/by-subdomain/${shop.subdomain}/products`)).json();
    const [shown] = listed.products;
    expect(shown.description).toBe(description);
    expect(shown.descriptionHtml).toContain('<strong>twelve neon cities</strong>');
    expect(shown.descriptionHtml).not.toMatch(/<script|<img|href="javascript:/i);
  });
});
