/**
 * Black-box: the store itself in the merchant API (#30 item 4, docs/architecture.md, The faces): a key with
 * store:read reads the store and its look, one with store:write renames it, changes its
 * description and accent colour and uploads or removes its logo, through the services the
 * dashboard uses; the storefront serves the logo, encoded again as product images are (no
 * metadata, bounded pixels, nothing that does not decode). Scopes, stores and the ceiling as for
 * every merchant route.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pngClaiming } from './support/pictures.js';
import { addStaff, createKeyFor, createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let owner: Seller;
let shop: { id: string; subdomain: string };
let other: { id: string; subdomain: string };
const keys: Record<'all' | 'readOnly' | 'writeOnly' | 'orders' | 'staff', string> = {} as never;

function call(key: string | undefined, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.url}/api/merchant/v1${path}`, {
    method,
    headers: {
      accept: 'application/json',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

function uploadLogo(key: string, storeId: string, bytes: Buffer, type = 'image/png'): Promise<Response> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type }), 'logo.png');
  return fetch(`${server.url}/api/merchant/v1/stores/${storeId}/logo`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
    body: form,
  });
}

async function errorOf(response: Response): Promise<{ status: number; code: string; paths: string[] }> {
  const body = (await response.json()) as { code: string; error: string; issues?: Array<{ path: string }> };
  expect(typeof body.error).toBe('string');
  return { status: response.status, code: body.code, paths: (body.issues ?? []).map((i) => i.path) };
}

/** A small picture with some detail, so it is no trivial file. */
const picture = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#2266aa' } }).composite([
    {
      input: {
        create: { width: Math.ceil(width / 2), height: Math.ceil(height / 3), channels: 3, background: 'white' },
      },
    },
  ]);
let PNG: Buffer;

beforeAll(async () => {
  PNG = await picture(64, 48).png().toBuffer();
  server = await startServer();
  owner = await registerSeller(server.url);
  shop = await createStoreFor(owner, 'Look Shop');
  other = await createStoreFor(owner, 'Other Shop');
  keys.all = (await createKeyFor(owner, { scopes: ['store:read', 'store:write'], storeIds: [shop.id] })).key;
  keys.readOnly = (await createKeyFor(owner, { scopes: ['store:read'], storeIds: [shop.id] })).key;
  keys.writeOnly = (await createKeyFor(owner, { scopes: ['store:write'], storeIds: [shop.id] })).key;
  keys.orders = (await createKeyFor(owner, { scopes: ['order:read'], storeIds: [shop.id] })).key;
  // A staff member who may view orders only: the store's read is theirs, its change is not.
  const staff = await registerSeller(server.url);
  await addStaff(owner, shop.id, staff, ['viewOrders']);
  keys.staff = (await createKeyFor(staff, { scopes: ['store:read', 'store:write'], storeIds: [shop.id] })).key;
});
afterAll(() => server?.stop());

describe('the store in the merchant API', () => {
  it('reads the store as the dashboard shows it, without role, permissions or the ban', async () => {
    const response = await call(keys.readOnly, 'GET', `/stores/${shop.id}`);
    expect(response.status).toBe(200);
    const store = await response.json();
    const seen = await (await dashboard(owner, 'GET', `/api/dashboard/stores/${shop.id}`)).json();
    const shared = Object.fromEntries(
      Object.entries(seen as Record<string, unknown>).filter(([k]) => !['role', 'permissions', 'banned'].includes(k)),
    );
    expect(store).toEqual(shared);
    expect(store).toMatchObject({
      id: shop.id,
      name: 'Look Shop',
      subdomain: shop.subdomain,
      currency: 'USD',
      description: '',
      accentColor: null,
      logoUrl: null,
    });
  });

  it('renames the store and changes its look, as the dashboard then shows it; null resets the colour', async () => {
    const changed = await call(keys.all, 'PATCH', `/stores/${shop.id}`, {
      name: 'Look Shop 2',
      description: 'Icons, fonts & <b>themes</b>.',
      accentColor: '#AA3300',
    });
    expect(changed.status, await changed.clone().text()).toBe(200);
    expect(await changed.json()).toMatchObject({
      name: 'Look Shop 2',
      description: 'Icons, fonts & <b>themes</b>.',
      accentColor: '#aa3300',
    });
    const seen = await (await dashboard(owner, 'GET', `/api/dashboard/stores/${shop.id}`)).json();
    expect(seen).toMatchObject({
      name: 'Look Shop 2',
      description: 'Icons, fonts & <b>themes</b>.',
      accentColor: '#aa3300',
    });
    // The storefront shows the description as text.
    const page = await (await fetch(`${server.url}/s/${shop.subdomain}`)).text();
    expect(page).toContain('Icons, fonts &amp; &lt;b&gt;themes&lt;/b&gt;.');

    const reset = await call(keys.all, 'PATCH', `/stores/${shop.id}`, { accentColor: null });
    expect(reset.status).toBe(200);
    expect(await reset.json()).toMatchObject({ name: 'Look Shop 2', accentColor: null });
  });

  it('sets the offline lease days (#41: 1 to 90), which the dashboard then shows; refuses 0 and 91', async () => {
    const changed = await call(keys.all, 'PATCH', `/stores/${shop.id}`, { settings: { licenseLeaseDays: 30 } });
    expect(changed.status, await changed.clone().text()).toBe(200);
    expect((await changed.json()).settings).toMatchObject({ licenseLeaseDays: 30 });
    const seen = await (await dashboard(owner, 'GET', `/api/dashboard/stores/${shop.id}`)).json();
    expect(seen.settings.licenseLeaseDays).toBe(30);
    for (const days of [0, 91]) {
      const error = await errorOf(
        await call(keys.all, 'PATCH', `/stores/${shop.id}`, { settings: { licenseLeaseDays: days } }),
      );
      expect(error.status, String(days)).toBe(400);
      expect(error.paths.join(' ')).toContain('licenseLeaseDays');
    }
  });

  it('answers 400 with the field for a bad colour, a too-long description, or a field a key may not change', async () => {
    for (const [body, field] of [
      [{ accentColor: 'red' }, 'accentColor'],
      [{ accentColor: '#12345' }, 'accentColor'],
      [{ description: 'x'.repeat(2001) }, 'description'],
      [{ name: '' }, 'name'],
      [{ currency: 'EUR' }, 'currency'],
      [{ allowedOrigins: ['https://evil.example'] }, 'allowedOrigins'],
    ] as const) {
      const error = await errorOf(await call(keys.all, 'PATCH', `/stores/${shop.id}`, body));
      expect(error.status, JSON.stringify(body)).toBe(400);
      expect(error.paths.join(' '), JSON.stringify(body)).toContain(field);
    }
    const store = await (await call(keys.readOnly, 'GET', `/stores/${shop.id}`)).json();
    expect(store).toMatchObject({ currency: 'USD', allowedOrigins: [] });
  });

  it('uploads a PNG logo the storefront serves, refuses text (415) and more than 1 MB (413), and removes it', async () => {
    const text = await errorOf(await uploadLogo(keys.all, shop.id, Buffer.from('just some text\n'), 'text/plain'));
    expect(text).toMatchObject({ status: 415, code: 'unsupported_media_type' });
    // Called a PNG, still not one.
    expect((await uploadLogo(keys.all, shop.id, Buffer.from('not really a png'))).status).toBe(415);
    const large = await errorOf(await uploadLogo(keys.all, shop.id, Buffer.concat([PNG, Buffer.alloc(1024 * 1024)])));
    expect(large).toMatchObject({ status: 413, code: 'payload_too_large' });
    expect((await (await call(keys.readOnly, 'GET', `/stores/${shop.id}`)).json()).logoUrl).toBeNull();

    const uploaded = await uploadLogo(keys.writeOnly, shop.id, PNG);
    expect(uploaded.status, await uploaded.clone().text()).toBe(200);
    const { logoUrl } = await uploaded.json();
    expect(logoUrl).toMatch(new RegExp(`^/s/${shop.subdomain}/logo/\\w+$`));
    expect((await (await call(keys.readOnly, 'GET', `/stores/${shop.id}`)).json()).logoUrl).toBe(logoUrl);
    const served = await fetch(`${server.url}${logoUrl}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    // The same picture, encoded again.
    const logo = Buffer.from(await served.arrayBuffer());
    expect(await sharp(logo).metadata()).toMatchObject({ format: 'png', width: 64, height: 48 });
    expect(Number(served.headers.get('content-length'))).toBe(logo.length);

    const removed = await fetch(`${server.url}/api/merchant/v1/stores/${shop.id}/logo`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${keys.all}` },
    });
    expect(removed.status).toBe(204);
    expect((await (await call(keys.readOnly, 'GET', `/stores/${shop.id}`)).json()).logoUrl).toBeNull();
    expect((await fetch(`${server.url}${logoUrl}`)).status).toBe(404);
  });

  it('serves the logo encoded again: no EXIF (GPS, Artist), at most 512 px a side; refuses a cut-short or oversized picture', async () => {
    const located = await picture(1200, 800)
      .jpeg()
      .withExif({
        IFD0: { Artist: 'Jane Roe, 12 Hidden Lane', Copyright: 'Jane Roe' },
        IFD3: {
          GPSLatitudeRef: 'N',
          GPSLatitude: '48/1 51/1 2976/100',
          GPSLongitudeRef: 'E',
          GPSLongitude: '2/1 21/1 780/100',
        },
      })
      .toBuffer();
    // Control: the upload does carry them (0x8825, little-endian: the EXIF pointer to the GPS fields).
    expect(located.includes(Buffer.from('Jane Roe'))).toBe(true);
    expect((await sharp(located).metadata()).exif!.includes(Buffer.from([0x25, 0x88]))).toBe(true);

    const uploaded = await uploadLogo(keys.all, shop.id, located, 'image/jpeg');
    expect(uploaded.status, await uploaded.clone().text()).toBe(200);
    const served = await fetch(`${server.url}${(await uploaded.json()).logoUrl}`);
    expect(served.headers.get('content-type')).toBe('image/jpeg');
    const logo = Buffer.from(await served.arrayBuffer());
    const meta = await sharp(logo).metadata();
    expect(meta).toMatchObject({ format: 'jpeg', width: 512, height: 341 });
    expect(meta.exif).toBeUndefined();
    expect(logo.includes(Buffer.from('Jane Roe'))).toBe(false);
    expect(logo.includes(Buffer.from('Exif'))).toBe(false);

    const before = (await (await call(keys.readOnly, 'GET', `/stores/${shop.id}`)).json()).logoUrl;
    // A PNG cut in half: its header is whole, its pixels are not.
    const whole = await picture(300, 300).png().toBuffer();
    const cut = await errorOf(await uploadLogo(keys.all, shop.id, whole.subarray(0, Math.floor(whole.length / 2))));
    expect(cut).toMatchObject({ status: 415, code: 'unsupported_media_type' });
    // 20000 × 20000 in a few hundred bytes: refused from its header, never decoded.
    const huge = await uploadLogo(keys.all, shop.id, pngClaiming(20_000, 20_000));
    expect(huge.status).toBe(413);
    expect(await huge.json()).toEqual({
      error: 'The logo may have at most 16777216 pixels (4096 × 4096); this one is 20000 × 20000.',
      code: 'payload_too_large',
    });
    // Neither replaced the logo.
    expect((await (await call(keys.readOnly, 'GET', `/stores/${shop.id}`)).json()).logoUrl).toBe(before);
  });

  it('answers 403 without the scope, for another store and above the ceiling; 401 without a key', async () => {
    const denied = async (response: Response, code: string) =>
      expect(await errorOf(response)).toMatchObject({ status: 403, code });
    await denied(await call(keys.orders, 'GET', `/stores/${shop.id}`), 'scope_missing');
    await denied(await call(keys.writeOnly, 'GET', `/stores/${shop.id}`), 'scope_missing');
    await denied(await call(keys.readOnly, 'PATCH', `/stores/${shop.id}`, { name: 'Taken' }), 'scope_missing');
    await denied(await uploadLogo(keys.readOnly, shop.id, PNG), 'scope_missing');
    await denied(
      await fetch(`${server.url}/api/merchant/v1/stores/${shop.id}/logo`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${keys.readOnly}` },
      }),
      'scope_missing',
    );

    await denied(await call(keys.all, 'GET', `/stores/${other.id}`), 'store_forbidden');
    await denied(await call(keys.all, 'PATCH', `/stores/${other.id}`, { name: 'Taken' }), 'store_forbidden');
    await denied(await uploadLogo(keys.all, other.id, PNG), 'store_forbidden');

    // A staff member with viewOrders reads the store; changing it needs manageSettings.
    expect((await call(keys.staff, 'GET', `/stores/${shop.id}`)).status).toBe(200);
    await denied(await call(keys.staff, 'PATCH', `/stores/${shop.id}`, { name: 'Taken' }), 'permission_missing');
    await denied(await uploadLogo(keys.staff, shop.id, PNG), 'permission_missing');

    for (const response of [
      await call(undefined, 'GET', `/stores/${shop.id}`),
      await call(undefined, 'PATCH', `/stores/${shop.id}`, { name: 'Taken' }),
      await fetch(`${server.url}/api/merchant/v1/stores/${shop.id}/logo`, { method: 'POST', body: new FormData() }),
    ])
      expect(await errorOf(response)).toMatchObject({ status: 401, code: 'unauthorized' });

    // Nothing of the above changed either store.
    expect((await (await dashboard(owner, 'GET', `/api/dashboard/stores/${other.id}`)).json()).name).toBe('Other Shop');
    expect((await (await call(keys.readOnly, 'GET', `/stores/${shop.id}`)).json()).name).not.toBe('Taken');
  });
});
