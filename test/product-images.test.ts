/**
 * Black-box, over HTTP: product images (issue #30). Up to 5 per product, PNG, JPEG or WebP up to
 * 2 MB, told apart by their bytes; each served as WebP at 480 and 960 px wide (never wider than
 * the original), immutable; `images` on the dashboard's, the merchant API's and the public
 * product; removed and reordered on both surfaces; shown on the storefront's pages with srcset,
 * width, height and lazy loading below the first row, and in the product page's JSON-LD.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct } from './support/catalog.js';
import { createKeyFor, createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

interface Image {
  id: string;
  width: number;
  height: number;
  url: string;
  variants: { width: number; height: number; url: string }[];
}

let server: Awaited<ReturnType<typeof startServer>>;
let seller: Seller;
let store: { id: string; subdomain: string };

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.url}${path}`, { headers });

/** A picture of `width` x `height` in `format`, with some detail so it is not trivially small. */
function picture(width: number, height: number, format: 'png' | 'jpeg' | 'webp'): Promise<Buffer> {
  const canvas = sharp({ create: { width, height, channels: 3, background: { r: 30, g: 90, b: 200 } } }).composite([
    {
      input: {
        create: { width: Math.ceil(width / 3), height: Math.ceil(height / 3), channels: 3, background: 'white' },
      },
      left: 0,
      top: 0,
    },
  ]);
  return canvas.toFormat(format).toBuffer();
}

function upload(path: string, bytes: Buffer, auth: Record<string, string>, type = 'image/png') {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type }), 'picture');
  return fetch(`${server.url}${path}`, { method: 'POST', headers: auth, body: form });
}

const sessionAuth = () => ({ cookie: seller.cookie, 'x-csrf-token': seller.csrfToken });
const imagesPath = (productId: string) => `/api/dashboard/stores/${store.id}/products/${productId}/images`;

beforeAll(async () => {
  server = await startServer({ PUBLIC_URL: 'https://shop.example.test' });
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller, 'Picture Shop');
});
afterAll(async () => {
  await server?.stop();
});

describe('product images', () => {
  it('makes WebP at 480 and 960 px once, never upscaled, and serves them immutable', async () => {
    const product = await createProduct(seller, store.id, { name: 'Painted Desert' });
    const wide = await upload(imagesPath(product.id), await picture(1600, 1000, 'png'), sessionAuth());
    expect(wide.status, await wide.clone().text()).toBe(201);
    const [image] = ((await wide.json()) as { images: Image[] }).images;
    expect(image!.variants.map((v) => [v.width, v.height])).toEqual([
      [480, 300],
      [960, 600],
    ]);
    expect([image!.width, image!.height]).toEqual([960, 600]);
    expect(image!.url).toBe(image!.variants[1]!.url);

    for (const variant of image!.variants) {
      const served = await get(variant.url);
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toBe('image/webp');
      expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      const meta = await sharp(Buffer.from(await served.arrayBuffer())).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['webp', variant.width, variant.height]);
    }
    // Only the widths made are served.
    expect((await get(image!.url.replace('/960.webp', '/961.webp'))).status).toBe(404);
    expect((await get(image!.url.replace('/960.webp', '/960.png'))).status).toBe(404);

    // A JPEG between the widths: 480 and its own width. A small WebP: its own width only.
    const middle = await upload(imagesPath(product.id), await picture(700, 350, 'jpeg'), sessionAuth(), 'image/jpeg');
    expect(middle.status).toBe(201);
    const small = await upload(imagesPath(product.id), await picture(300, 200, 'webp'), sessionAuth(), 'image/webp');
    expect(small.status).toBe(201);
    const images = ((await small.json()) as { images: Image[] }).images;
    expect(images.map((i) => i.variants.map((v) => v.width))).toEqual([[480, 960], [480, 700], [300]]);

    // The product outputs carry them, in order.
    const seen = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/products/${product.id}`)
    ).json();
    expect(seen.images).toEqual(images);
    const storefront = await (await get(`/api/stores/by-subdomain/${store.subdomain}/storefront`)).json();
    expect(storefront.products.find((p: { id: string }) => p.id === product.id).images).toEqual(images);
  });

  it('refuses what is not a PNG, JPEG or WebP (415), over 2 MB (413) and a sixth image (409)', async () => {
    const product = await createProduct(seller, store.id, { name: 'Refusals' });
    const gif = Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1');
    const refusedType = await upload(imagesPath(product.id), gif, sessionAuth(), 'image/png');
    expect(refusedType.status).toBe(415);
    expect((await refusedType.json()).code).toBe('unsupported_media_type');
    // A PNG's signature on bytes that are no picture.
    const broken = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 7)]);
    expect((await upload(imagesPath(product.id), broken, sessionAuth())).status).toBe(415);
    const big = Buffer.concat([await picture(64, 64, 'png'), Buffer.alloc(2 * 1024 * 1024)]);
    const tooBig = await upload(imagesPath(product.id), big, sessionAuth());
    expect(tooBig.status).toBe(413);
    expect((await tooBig.json()).code).toBe('payload_too_large');

    const png = await picture(64, 48, 'png');
    for (let n = 0; n < 5; n += 1) expect((await upload(imagesPath(product.id), png, sessionAuth())).status).toBe(201);
    const sixth = await upload(imagesPath(product.id), png, sessionAuth());
    expect(sixth.status).toBe(409);
    expect((await sixth.json()).code).toBe('conflict');
    const seen = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/products/${product.id}`)
    ).json();
    expect(seen.images).toHaveLength(5);

    // Another store's seller cannot add to it.
    const other = await registerSeller(server.url);
    const foreign = await upload(imagesPath(product.id), png, {
      cookie: other.cookie,
      'x-csrf-token': other.csrfToken,
    });
    expect(foreign.status).toBe(403);
  });

  it('refuses a picture of more than 4096 × 4096 pixels with 413 though its file is small, and takes one of 4096 × 4096', async () => {
    const product = await createProduct(seller, store.id, { name: 'Large pictures' });
    // 6300 × 6300 (39.7 million pixels) in about 130 KB: what the outside probe sent 32 at a time.
    const bomb = await sharp({ create: { width: 6300, height: 6300, channels: 3, background: '#ffffff' } })
      .png({ compressionLevel: 9 })
      .toBuffer();
    expect(bomb.length).toBeLessThan(200_000);
    const refused = await upload(imagesPath(product.id), bomb, sessionAuth());
    expect(refused.status).toBe(413);
    expect(await refused.json()).toEqual({
      error: 'The image may have at most 16777216 pixels (4096 × 4096); this one is 6300 × 6300.',
      code: 'payload_too_large',
    });
    const largest = await upload(imagesPath(product.id), await picture(4096, 4096, 'png'), sessionAuth());
    expect(largest.status, await largest.clone().text()).toBe(201);
    const { images } = (await largest.json()) as { images: Image[] };
    expect(images.map((i) => i.variants.map((v) => [v.width, v.height]))).toEqual([
      [
        [480, 480],
        [960, 960],
      ],
    ]);
  });

  it('reorders and removes images on the dashboard; a removed image is no longer served', async () => {
    const product = await createProduct(seller, store.id, { name: 'Reorder me' });
    for (const size of [100, 120, 140])
      expect((await upload(imagesPath(product.id), await picture(size, size, 'png'), sessionAuth())).status).toBe(201);
    const before = (
      await (await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/products/${product.id}`)).json()
    ).images as Image[];
    const reversed = before.map((i) => i.id).reverse();
    const reordered = await dashboard(seller, 'PUT', `${imagesPath(product.id)}/order`, { imageIds: reversed });
    expect(reordered.status, await reordered.clone().text()).toBe(200);
    expect(((await reordered.json()).images as Image[]).map((i) => i.width)).toEqual([140, 120, 100]);
    // Not a permutation of the images: 400, nothing changes.
    const partial = await dashboard(seller, 'PUT', `${imagesPath(product.id)}/order`, { imageIds: reversed.slice(1) });
    expect(partial.status).toBe(400);

    const removed = await dashboard(seller, 'DELETE', `${imagesPath(product.id)}/${reversed[0]}`);
    expect(removed.status).toBe(204);
    expect((await get(before[2]!.url)).status).toBe(404);
    const after = (
      await (await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/products/${product.id}`)).json()
    ).images as Image[];
    expect(after.map((i) => i.width)).toEqual([120, 100]);
    expect((await dashboard(seller, 'DELETE', `${imagesPath(product.id)}/${reversed[0]}`)).status).toBe(404);
  });

  it('works through the merchant API with product:write, and not with product:read', async () => {
    const product = await createProduct(seller, store.id, { name: 'Merchant pictures' });
    const writer = await createKeyFor(seller, { scopes: ['product:read', 'product:write'], storeIds: [store.id] });
    const reader = await createKeyFor(seller, { scopes: ['product:read'], storeIds: [store.id] });
    const path = `/api/merchant/v1/stores/${store.id}/products/${product.id}/images`;
    const png = await picture(500, 250, 'png');
    expect((await upload(path, png, { authorization: `Bearer ${reader.key}` })).status).toBe(403);
    const added = await upload(path, png, { authorization: `Bearer ${writer.key}` });
    expect(added.status, await added.clone().text()).toBe(201);
    const [image] = ((await added.json()) as { images: Image[] }).images;
    expect(image!.variants.map((v) => v.width)).toEqual([480, 500]);

    const merchant = (method: string, url: string, body?: unknown) =>
      fetch(`${server.url}${url}`, {
        method,
        headers: { authorization: `Bearer ${writer.key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const read = await merchant('GET', `/api/merchant/v1/stores/${store.id}/products/${product.id}`);
    expect((await read.json()).images).toEqual([image]);
    expect((await merchant('PUT', `${path}/order`, { imageIds: [image!.id] })).status).toBe(200);
    expect((await merchant('DELETE', `${path}/${image!.id}`)).status).toBe(204);
    expect((await get(image!.url)).status).toBe(404);
  });

  it('shows them on the storefront: srcset, width, height, lazy below the first row, JSON-LD image', async () => {
    const shop = await createStoreFor(seller, 'Gallery');
    const products = [];
    for (let n = 1; n <= 6; n += 1) products.push(await createProduct(seller, shop.id, { name: `Print ${n}` }));
    const path = (id: string) => `/api/dashboard/stores/${shop.id}/products/${id}/images`;
    const photo = await picture(1200, 900, 'jpeg');
    const images: Image[] = [];
    for (const product of products) {
      const added = await upload(path(product.id), photo, sessionAuth(), 'image/jpeg');
      expect(added.status).toBe(201);
      images.push(((await added.json()) as { images: Image[] }).images[0]!);
    }
    const second = await upload(path(products[0]!.id), await picture(800, 800, 'png'), sessionAuth());
    const extra = ((await second.json()) as { images: Image[] }).images[1]!;

    const html = await (await get(`/s/${shop.subdomain}`)).text();
    const tags = html.match(/<img class="card-image"[^>]*>/g) ?? [];
    expect(tags).toHaveLength(6);
    const [small, large] = images[0]!.variants;
    expect(tags[0]).toContain(`srcset="${small!.url} 480w, ${large!.url} 960w"`);
    expect(tags[0]).toContain('width="960" height="720"');
    expect(tags[0]).toContain('alt="Print 1"');
    expect(tags.map((t) => t.includes('loading="lazy"'))).toEqual([false, false, false, false, true, true]);

    const page = await (await get(`/s/${shop.subdomain}/products/${products[0]!.slug}`)).text();
    const main = page.match(/<img class="main-image"[^>]*>/)?.[0];
    expect(main).toContain(`src="${small!.url}"`);
    expect(main).not.toContain('loading="lazy"');
    expect(page.match(/<img class="more-image"[^>]*>/)?.[0]).toContain('loading="lazy"');
    expect(page).toContain(`<meta property="og:image" content="https://shop.example.test${images[0]!.url}">`);
    const jsonLd = JSON.parse(page.match(/<script type="application\/ld\+json">(.*?)<\/script>/s)![1]!);
    expect(jsonLd.image).toEqual([
      `https://shop.example.test${images[0]!.url}`,
      `https://shop.example.test${extra.url}`,
    ]);
  });

  it("stops serving a product's images once the product is deleted", async () => {
    const product = await createProduct(seller, store.id, { name: 'Going away' });
    const added = await upload(imagesPath(product.id), await picture(200, 100, 'png'), sessionAuth());
    const [image] = ((await added.json()) as { images: Image[] }).images;
    expect((await get(image!.url)).status).toBe(200);
    expect((await dashboard(seller, 'DELETE', `/api/dashboard/stores/${store.id}/products/${product.id}`)).status).toBe(
      204,
    );
    expect((await get(image!.url)).status).toBe(404);
  });
});
