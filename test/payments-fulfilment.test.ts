/**
 * Black-box: from payment to the buyer holding the goods. Payments arrive as signed
 * notifications of the test gateway; the merchant API and the buyer routes are read back.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { buy, notify, pay, signedNotification, TEST_GATEWAY_SECRET } from './support/payments.js';
import {
  addStaff,
  clientIp,
  createKeyFor,
  createStoreFor,
  dashboard,
  registerSeller,
  type Seller,
} from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let db: pg.Client;
let seller: Seller;
let store: { id: string };
let merchantKey: string;
const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-payments-'));

beforeAll(async () => {
  server = await startServer({ TEST_GATEWAY_SECRET, DATA_DIR: dataDir });
  db = new pg.Client({ connectionString: server.db.url });
  await db.connect();
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller);
  merchantKey = (await createKeyFor(seller, { scopes: ['order:read', 'order:update'], storeIds: [store.id] })).key;
});
afterAll(async () => {
  await db?.end();
  await server?.stop();
});

async function checkout(
  productId: string,
  quantity = 1,
  email = `buyer-${randomBytes(4).toString('hex')}@example.test`,
  shopId = store.id,
) {
  const response = await fetch(`${server.url}/api/v1/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ shopId, cart: [{ productId, quantity }], email }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  const { url, orderId } = await response.json();
  return { orderId: orderId as string, token: new URL(url).searchParams.get('token')!, email };
}

const merchant = (method: string, orderId: string, body?: string) =>
  fetch(`${server.url}/api/merchant/v1/stores/${store.id}/orders/${orderId}`, {
    method,
    headers: {
      authorization: `Bearer ${merchantKey}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body,
  });

const orderRow = async (id: string) => (await db.query('select * from "order" where id = $1', [id])).rows[0];

describe('settlement', () => {
  it('settles a paid order, assigns its keys and completes it', async () => {
    const product = await createProduct(seller, store.id, { name: 'Key', price: 10, deliveryMethods: ['licenseKeys'] });
    await importKeys(seller, store.id, product.id, ['K-1', 'K-2', 'K-3']);
    const { orderId, token } = await checkout(product.id, 2);
    const response = await pay(server.url, { orderId, amount: 20 });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ outcome: 'settled' });
    const detail = await (await merchant('GET', orderId)).json();
    expect(detail).toMatchObject({
      status: 'completed',
      paid: 20,
      keyCount: 2,
      paymentMethod: 'test',
      completedAt: expect.any(String),
    });
    const keys = await (await fetch(`${server.url}/api/orders/${orderId}/keys?token=${token}`)).json();
    const delivered = keys.keys.map((k: { key: string }) => k.key);
    expect(new Set(delivered).size).toBe(2);
    for (const key of delivered) expect(['K-1', 'K-2', 'K-3']).toContain(key);
    const types = (
      await db.query(`select type from event where payload->'order'->>'id' = $1 order by created_at, type`, [orderId])
    ).rows.map((r) => r.type);
    expect(types).toEqual(expect.arrayContaining(['order.created', 'order.paid', 'order.completed']));
  });

  it('settles the same notification once, even delivered twice at once', async () => {
    const product = await createProduct(seller, store.id, { name: 'Key', price: 5, deliveryMethods: ['licenseKeys'] });
    await importKeys(seller, store.id, product.id, ['D-1', 'D-2']);
    const { orderId } = await checkout(product.id);
    const signed = signedNotification({ orderId, amount: 5 });
    const outcomes = (
      await Promise.all(
        [notify(server.url, signed), notify(server.url, signed)].map(async (r) => (await (await r).json()).outcome),
      )
    ).sort();
    expect(outcomes).toEqual(['duplicate', 'settled']);
    expect((await orderRow(orderId)).key_count).toBe(1);
    expect((await db.query('select count(*)::int as n from payment where order_id = $1', [orderId])).rows[0].n).toBe(1);
  });

  it.each([
    [
      'a bad signature',
      (orderId: string) => ({ ...signedNotification({ orderId, amount: 5 }, { secret: 'wrong' }) }),
      400,
    ],
    [
      'a replayed old timestamp',
      (orderId: string) =>
        signedNotification({ orderId, amount: 5 }, { timestamp: Math.floor(Date.now() / 1000) - 3600 }),
      400,
    ],
    [
      'a body changed after signing',
      (orderId: string) => {
        const s = signedNotification({ orderId, amount: 5 });
        return { ...s, body: s.body.replace('"amount":5', '"amount":50') };
      },
      400,
    ],
    ['a lower amount', (orderId: string) => signedNotification({ orderId, amount: 4.99 }), 200],
    ['another currency', (orderId: string) => signedNotification({ orderId, amount: 5, currency: 'EUR' }), 200],
  ])('settles nothing and changes no order on %s', async (_name, make, status) => {
    const product = await createProduct(seller, store.id, { name: 'Key', price: 5, deliveryMethods: ['licenseKeys'] });
    await importKeys(seller, store.id, product.id, [`X-${randomBytes(4).toString('hex')}`]);
    const { orderId } = await checkout(product.id);
    const before = await orderRow(orderId);
    const response = await notify(server.url, make(orderId));
    expect(response.status).toBe(status);
    const after = await orderRow(orderId);
    expect(after.status).toBe('pending');
    expect(after.paid_minor).toBe('0');
    expect(after.key_count).toBe(0);
    expect(after.paid_at).toBeNull();
    if (status === 400) {
      expect((await response.json()).code).toBe('signature_invalid');
      expect(after.updated_at).toEqual(before.updated_at);
    } else {
      expect((await response.json()).outcome).toMatch(/_mismatch$/);
      expect(after.payment_flag).toMatch(/_mismatch$/); // flagged for the seller
    }
  });

  it('assigns no key twice: 200 orders paid at once against 150 keys, twenty times', { timeout: 240_000 }, async () => {
    for (let round = 0; round < 20; round++) {
      const product = await createProduct(seller, store.id, {
        name: `Race ${round}`,
        price: 1,
        deliveryMethods: ['licenseKeys'],
      });
      await importKeys(
        seller,
        store.id,
        product.id,
        Array.from({ length: 150 }, (_, i) => `R${round}-${i}-${randomBytes(3).toString('hex')}`),
      );
      // Orders straight into the database (checkout is not what is measured here).
      const ids: string[] = [];
      const values: string[] = [];
      const params: unknown[] = [];
      for (let i = 0; i < 200; i++) {
        const id = `race${round.toString().padStart(2, '0')}${i.toString().padStart(4, '0')}${randomBytes(4).toString('hex')}`;
        ids.push(id);
        params.push(id, store.id, product.id);
        const n = params.length;
        values.push(`($${n - 2}, $${n - 1}, $${n})`);
      }
      await db.query(
        `with o as (insert into "order" (id, store_id, status, product_name, price_minor, currency, customer_email, created_at, updated_at)
           select v.id, v.store_id, 'pending', 'Race', 100, 'USD', 'race@example.test', now(), now() from (values ${values.join(', ')}) v(id, store_id, product_id) returning id)
         insert into order_line (id, order_id, product_id, product_name, quantity, unit_price_minor)
         select 'l' || substr(o.id, 2), o.id, $3, 'Race', 1, 100 from o`,
        params,
      );
      const outcomes = await Promise.all(
        ids.map(async (orderId) => (await (await pay(server.url, { orderId, amount: 1 })).json()).outcome),
      );
      expect(outcomes.every((o) => o === 'settled')).toBe(true);
      const { rows } = await db.query(
        `select (select count(*)::int from license_key where product_id = $1 and status = 'assigned') as assigned,
                (select count(distinct id)::int from license_key where product_id = $1 and status = 'assigned') as distinct_keys,
                (select count(*)::int from "order" where id = any($2) and status = 'completed') as completed,
                (select count(*)::int from "order" where id = any($2) and status = 'processing') as processing,
                (select count(*)::int from (select order_id from license_key where product_id = $1 and order_id is not null group by order_id having count(*) > 1) d) as doubled`,
        [product.id, ids],
      );
      expect(rows[0]).toEqual({ assigned: 150, distinct_keys: 150, completed: 150, processing: 50, doubled: 0 });
      // The restock serves the waiting orders itself.
      await importKeys(
        seller,
        store.id,
        product.id,
        Array.from({ length: 50 }, (_, i) => `S${round}-${i}-${randomBytes(3).toString('hex')}`),
      );
      const done = (
        await db.query(
          `select count(*)::int as n from "order" where id = any($1) and status = 'completed' and key_count = 1`,
          [ids],
        )
      ).rows[0].n;
      expect(done).toBe(200);
    }
  });
});

describe('PATCH /api/merchant/v1/stores/{storeId}/orders/{orderId}', () => {
  let pending: string;
  let paid: string;
  let empty: string;

  beforeAll(async () => {
    const manual = await createProduct(seller, store.id, {
      name: 'Service',
      price: 3,
      deliveryMethods: ['manualDelivery'],
    });
    pending = (await checkout(manual.id)).orderId;
    paid = (await buy(server.url, { storeId: store.id, productId: manual.id })).id;
    const keyed = await createProduct(seller, store.id, {
      name: 'No stock',
      price: 2,
      deliveryMethods: ['licenseKeys'],
    });
    await importKeys(seller, store.id, keyed.id, ['ONLY-ONE']);
    empty = (await checkout(keyed.id)).orderId;
    await db.query(`delete from license_key where product_id = $1`, [keyed.id]); // sold out before payment
    await pay(server.url, { orderId: empty, amount: 2 });
  });

  it.each([
    ['markDelivered true on a pending order', () => pending, '{"markDelivered":true}', 400, 'order_not_deliverable'],
    ['markDelivered false', () => paid, '{"markDelivered":false}', 400, 'validation_failed'],
    ['an arbitrary status', () => paid, '{"status":"completed"}', 400, 'validation_failed'],
    ['another unsupported field', () => paid, '{"note":"x","price":0}', 400, 'validation_failed'],
    ['invalid JSON', () => paid, '{"markDelivered":tru', 400, 'invalid_json'],
    ['markDelivered as the string "true"', () => paid, '{"markDelivered":"true"}', 400, 'validation_failed'],
    ['an empty body', () => paid, '{}', 400, 'validation_failed'],
    ['a note with control characters', () => paid, '{"note":"a\\u0007b"}', 400, 'validation_failed'],
    ['a note over 5000 characters', () => paid, JSON.stringify({ note: 'x'.repeat(5001) }), 400, 'validation_failed'],
    ['markDelivered true with nothing to deliver', () => empty, '{"markDelivered":true}', 400, 'nothing_to_deliver'],
  ])('refuses %s', async (_name, order, body, status, code) => {
    const before = await orderRow(order());
    const response = await merchant('PATCH', order(), body);
    expect(response.status).toBe(status);
    expect((await response.json()).code).toBe(code);
    expect((await orderRow(order())).updated_at).toEqual(before.updated_at);
  });

  it('sets the note and answers the order detail', async () => {
    const response = await merchant('PATCH', paid, JSON.stringify({ note: 'Called the buyer.\nAll good.' }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      id: paid,
      note: 'Called the buyer.\nAll good.',
      status: 'processing',
    });
  });

  it('marks a paid order with deliverable content delivered: completed, idempotent', async () => {
    const response = await merchant('PATCH', paid, '{"markDelivered":true}');
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({ status: 'completed', completedAt: expect.any(String) });
    expect((await orderRow(paid)).delivered_at).not.toBeNull();
    const again = await merchant('PATCH', paid, '{"markDelivered":true}');
    expect(again.status).toBe(200);
    expect((await again.json()).completedAt).toBe(body.completedAt);
  });

  it('needs order:update', async () => {
    const readOnly = (await createKeyFor(seller, { scopes: ['order:read'], storeIds: [store.id] })).key;
    const response = await fetch(`${server.url}/api/merchant/v1/stores/${store.id}/orders/${paid}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${readOnly}`, 'content-type': 'application/json' },
      body: '{"note":"x"}',
    });
    expect(response.status).toBe(403);
    expect((await response.json()).code).toBe('scope_missing');
  });
});

describe('buyer delivery', () => {
  let product: { id: string };
  let order: { orderId: string; token: string; email: string };
  let unpaid: { orderId: string; token: string; email: string };

  beforeAll(async () => {
    product = await createProduct(seller, store.id, {
      name: 'Bundle',
      price: 7,
      deliveryMethods: ['licenseKeys', 'downloadFiles', 'deliveryInstructions'],
      deliveryInstructions: 'Redeem on the website.',
    });
    await importKeys(seller, store.id, product.id, ['BUNDLE-KEY-1']);
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('file body')], { type: 'text/plain' }), 'readme.txt');
    const upload = await fetch(`${server.url}/api/dashboard/stores/${store.id}/products/${product.id}/files`, {
      method: 'POST',
      headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken },
      body: form,
    });
    expect(upload.status).toBe(201);
    order = await checkout(product.id);
    unpaid = await checkout(product.id); // while the key is still in stock
    await pay(server.url, { orderId: order.orderId, amount: 7 });
  });

  const delivery = (orderId: string, query = '', headers: Record<string, string> = {}) =>
    fetch(`${server.url}/api/orders/${orderId}/delivery${query}`, { headers });

  it('delivers keys, signed file links, instructions and custom fields', async () => {
    const response = await delivery(order.orderId, `?token=${order.token}`);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({
      orderId: order.orderId,
      status: 'completed',
      methods: ['licenseKeys', 'downloadFiles', 'deliveryInstructions'],
      licenseKeys: [{ productId: product.id, productName: 'Bundle', key: 'BUNDLE-KEY-1' }],
      deliveryInstructions: [{ productId: product.id, text: 'Redeem on the website.' }],
      customFields: [],
    });
    const [file] = body.downloadFiles;
    expect(file).toMatchObject({ name: 'readme.txt', size: 9 });
    const link = new URL(file.url);
    const download = await fetch(`${server.url}${link.pathname}${link.search}`);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe('file body');
    expect(download.headers.get('content-disposition')).toContain('readme.txt');
    const tampered = await fetch(
      `${server.url}${link.pathname}?expires=${link.searchParams.get('expires')}&sig=${'0'.repeat(64)}`,
    );
    expect(tampered.status).toBe(403);
    const stale = await fetch(`${server.url}${link.pathname}?expires=1&sig=${link.searchParams.get('sig')}`);
    expect(stale.status).toBe(403);
  });

  it('opens by token in the query, the checkout cookie, the e-mail, or a staff session', async () => {
    expect((await delivery(order.orderId, `?token=${order.token}`)).status).toBe(200);
    const enter = await fetch(`${server.url}/api/checkout/enter`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orderId: order.orderId, token: order.token }),
    });
    const cookie = enter.headers
      .getSetCookie()
      .find((c) => c.startsWith('svc_checkout='))!
      .split(';')[0]!;
    expect((await delivery(order.orderId, '', { cookie })).status).toBe(200);
    expect((await delivery(order.orderId, `?email=${encodeURIComponent(order.email.toUpperCase())}`)).status).toBe(200);
    const staff = await registerSeller(server.url);
    await addStaff(seller, store.id, staff, ['viewOrders']);
    expect((await delivery(order.orderId, '', { cookie: staff.cookie })).status).toBe(200);
  });

  it.each([
    ['no credential', () => '', 401, 'unauthorized'],
    ['a wrong token', () => `?token=${'a'.repeat(43)}`, 403, 'store_forbidden'],
    ['a wrong e-mail', () => '?email=someone-else@example.test', 403, 'store_forbidden'],
  ])('refuses %s', async (_name, query, status, code) => {
    const response = await delivery(order.orderId, query());
    expect(response.status).toBe(status);
    expect((await response.json()).code).toBe(code);
  });

  it('refuses a staff member without viewOrders, an unknown order and an unpaid one', async () => {
    const staff = await registerSeller(server.url);
    await addStaff(seller, store.id, staff, ['manageProducts']);
    expect((await delivery(order.orderId, '', { cookie: staff.cookie })).status).toBe(403);
    expect((await delivery('zzzzzzzzzzzzzzzzzzzzzzzz', `?token=${order.token}`)).status).toBe(404);
    const response = await delivery(unpaid.orderId, `?token=${unpaid.token}`);
    expect(response.status).toBe(409);
    expect((await response.json()).code).toBe('order_not_paid');
    expect((await fetch(`${server.url}/api/orders/${unpaid.orderId}/keys?token=${unpaid.token}`)).status).toBe(409);
  });

  it('turns e-mail access off when the store says so', async () => {
    const settings = await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, {
      settings: { emailOrderAccess: false },
    });
    expect(settings.status).toBe(200);
    expect((await delivery(order.orderId, `?email=${encodeURIComponent(order.email)}`)).status).toBe(403);
    await dashboard(seller, 'PATCH', `/api/dashboard/stores/${store.id}`, { settings: { emailOrderAccess: true } });
  });

  it('takes keys out of the delivery once refunded', async () => {
    await importKeys(seller, store.id, product.id, ['REFUND-ME']);
    const refunded = await buy(server.url, { storeId: store.id, productId: product.id });
    const before = await (await fetch(`${server.url}/api/orders/${refunded.id}/keys?token=${refunded.token}`)).json();
    expect(before.keys.map((k: { key: string }) => k.key)).toEqual(['REFUND-ME']);
    const refund = await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/orders/${refunded.id}/refund`);
    expect(refund.status).toBe(200);
    expect((await refund.json()).status).toBe('refunded');
    const keys = await (await fetch(`${server.url}/api/orders/${refunded.id}/keys?token=${refunded.token}`)).json();
    expect(keys).toEqual({ orderId: refunded.id, status: 'refunded', keys: [] });
    const payload = await (await delivery(refunded.id, `?token=${refunded.token}`)).json();
    expect(JSON.stringify(payload)).not.toContain('REFUND-ME');
    expect((await db.query(`select status from license_key where order_id = $1`, [refunded.id])).rows).toEqual([
      { status: 'revoked' },
    ]);
  });

  it('fills a processing order on try-assign-keys after a restock', async () => {
    const scarce = await createProduct(seller, store.id, {
      name: 'Scarce',
      price: 1,
      deliveryMethods: ['licenseKeys'],
    });
    await importKeys(seller, store.id, scarce.id, ['S-1']);
    const o = await checkout(scarce.id);
    await db.query(`update license_key set status = 'revoked' where product_id = $1`, [scarce.id]); // gone before payment
    await pay(server.url, { orderId: o.orderId, amount: 1 });
    const tryAssign = () =>
      fetch(`${server.url}/api/orders/${o.orderId}/try-assign-keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: o.token }),
      });
    const waiting = await (await tryAssign()).json();
    expect(waiting).toEqual({ orderId: o.orderId, status: 'processing', keyCount: 0, missingKeys: 1 });
    await db.query(
      `insert into license_key (id, product_id, value_enc, value_hash, status, created_at) select 'k' || substr(md5(random()::text), 1, 20), product_id, value_enc, md5(random()::text), 'available', now() from license_key where product_id = $1 limit 1`,
      [scarce.id],
    );
    const filled = await (await tryAssign()).json();
    expect(filled).toEqual({ orderId: o.orderId, status: 'completed', keyCount: 1, missingKeys: 0 });
  });
});

describe('dashboard order actions', () => {
  it('marks a manual payment paid, cancels only pending orders', async () => {
    const manual = await createProduct(seller, store.id, {
      name: 'Manual pay',
      price: 4,
      deliveryMethods: ['deliveryInstructions'],
      deliveryInstructions: 'Hello.',
    });
    const o = await checkout(manual.id);
    const paid = await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/orders/${o.orderId}/mark-paid`);
    expect(paid.status).toBe(200);
    expect(await paid.json()).toMatchObject({ status: 'completed', paid: 4 });
    expect(
      (await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/orders/${o.orderId}/cancel`)).status,
    ).toBe(400);
    const other = await checkout(manual.id);
    const cancelled = await dashboard(
      seller,
      'POST',
      `/api/dashboard/stores/${store.id}/orders/${other.orderId}/cancel`,
    );
    expect((await cancelled.json()).status).toBe('cancelled');
    expect(
      (await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/orders/${other.orderId}/mark-paid`)).status,
    ).toBe(400);
  });

  it('needs editOrders', async () => {
    const viewer = await registerSeller(server.url);
    await addStaff(seller, store.id, viewer, ['viewOrders']);
    const manual = await createProduct(seller, store.id, { name: 'X', price: 1 });
    const o = await checkout(manual.id);
    const response = await dashboard(viewer, 'POST', `/api/dashboard/stores/${store.id}/orders/${o.orderId}/mark-paid`);
    expect(response.status).toBe(403);
  });
});

describe('order lines and the buyer’s link on the seller’s order', () => {
  const get = (orderId: string) => merchant('GET', orderId);

  it('lists every line with what it delivered, keys masked, and a link that opens the order for the buyer', async () => {
    const keysProduct = await createProduct(seller, store.id, {
      name: 'Starfall — Steam key',
      price: 12.5,
      deliveryMethods: ['licenseKeys'],
    });
    const guide = await createProduct(seller, store.id, {
      name: 'Strategy guide',
      price: 3,
      deliveryMethods: ['downloadFiles', 'deliveryInstructions', 'manualDelivery'],
      deliveryInstructions: 'Open the PDF.',
    });
    const keys = [`STARFALL-${randomBytes(6).toString('hex')}-AAAA`, `STARFALL-${randomBytes(6).toString('hex')}-BBBB`];
    await importKeys(seller, store.id, keysProduct.id, keys);
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('guide body')], { type: 'application/pdf' }), 'guide.pdf');
    const upload = await fetch(`${server.url}/api/dashboard/stores/${store.id}/products/${guide.id}/files`, {
      method: 'POST',
      headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken },
      body: form,
    });
    expect(upload.status).toBe(201);
    const created = await fetch(`${server.url}/api/v1/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        shopId: store.id,
        cart: [
          { productId: keysProduct.id, quantity: 2 },
          { productId: guide.id, quantity: 1 },
        ],
        email: 'lines@example.test',
      }),
    });
    expect(created.status).toBe(200);
    const { orderId } = await created.json();

    const pending = await (await get(orderId)).json();
    expect(pending.productName).toBe('Starfall — Steam key +1 more');
    expect(pending.lines).toEqual([
      {
        id: expect.any(String),
        productId: keysProduct.id,
        productName: 'Starfall — Steam key',
        quantity: 2,
        unitPrice: 12.5,
        plan: null,
        deliveryMethods: ['licenseKeys'],
        delivered: { licenseKeys: [], downloadFiles: [], deliveryInstructions: null, manualDelivery: null },
      },
      {
        id: expect.any(String),
        productId: guide.id,
        productName: 'Strategy guide',
        quantity: 1,
        unitPrice: 3,
        plan: null,
        deliveryMethods: ['downloadFiles', 'deliveryInstructions', 'manualDelivery'],
        delivered: { licenseKeys: [], downloadFiles: [], deliveryInstructions: null, manualDelivery: 'pending' },
      },
    ]);

    expect((await pay(server.url, { orderId, amount: 28 })).status).toBe(200);
    const response = await get(orderId);
    const text = await response.clone().text();
    for (const key of keys) expect(text).not.toContain(key);
    const paid = await response.json();
    expect(paid.status).toBe('processing'); // the guide is delivered by hand
    const [keyLine, guideLine] = paid.lines;
    expect(keyLine.delivered.licenseKeys).toHaveLength(2);
    for (const key of keyLine.delivered.licenseKeys) {
      expect(key).toEqual({
        id: expect.any(String),
        masked: expect.stringMatching(/^••••••••(AAAA|BBBB)$/),
        status: 'assigned',
      });
    }
    expect(keyLine.delivered.licenseKeys.map((k: { masked: string }) => k.masked.slice(-4)).sort()).toEqual([
      'AAAA',
      'BBBB',
    ]);
    expect(guideLine.delivered).toEqual({
      licenseKeys: [],
      downloadFiles: [{ id: expect.any(String), name: 'guide.pdf', size: 10 }],
      deliveryInstructions: 'Open the PDF.',
      manualDelivery: 'pending',
    });
    // The license behind a masked key is the one the licenses API names.
    const licenseKey = (await createKeyFor(seller, { scopes: ['license:read'], storeIds: [store.id] })).key;
    const license = await fetch(
      `${server.url}/api/merchant/v1/stores/${store.id}/licenses/${keyLine.delivered.licenseKeys[0].id}`,
      { headers: { authorization: `Bearer ${licenseKey}` } },
    );
    expect(license.status).toBe(200);
    expect((await license.json()).masked).toBe(keyLine.delivered.licenseKeys[0].masked);

    // The buyer's link: the order page, and its token opens the delivery without any other credential.
    const link = new URL(paid.orderUrl);
    expect(link.pathname).toBe(`/orders/${orderId}`); // on PUBLIC_URL (its default names port 0 here)
    const token = link.searchParams.get('token')!;
    const delivery = await fetch(`${server.url}/api/orders/${orderId}/delivery?token=${token}`);
    expect(delivery.status).toBe(200);
    expect((await delivery.json()).licenseKeys.map((k: { key: string }) => k.key).sort()).toEqual([...keys].sort());
    expect((await fetch(`${server.url}/api/orders/${orderId}/keys?token=${token}`)).status).toBe(200);
    const page = await fetch(paid.orderUrl.replace(link.origin, server.url));
    expect(page.status).toBe(200);
    // It opens this order only, and an edited token opens nothing.
    const other = await buy(server.url, { storeId: store.id, productId: guide.id });
    expect((await fetch(`${server.url}/api/orders/${other.id}/delivery?token=${token}`)).status).toBe(403);
    const edited = `${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`;
    expect((await fetch(`${server.url}/api/orders/${orderId}/delivery?token=${edited}`)).status).toBe(403);
    // The same link on every read: it is the order's, not the request's.
    expect((await (await get(orderId)).json()).orderUrl).toBe(paid.orderUrl);

    // A refund takes the files and instructions back and shows the keys revoked.
    const refundKey = (await createKeyFor(seller, { scopes: ['order:refund'], storeIds: [store.id] })).key;
    const refunded = await fetch(`${server.url}/api/merchant/v1/stores/${store.id}/orders/${orderId}/refund`, {
      method: 'POST',
      headers: { authorization: `Bearer ${refundKey}` },
    });
    expect(refunded.status).toBe(200);
    const after = await refunded.json();
    expect(after.lines[0].delivered.licenseKeys.map((k: { status: string }) => k.status)).toEqual([
      'revoked',
      'revoked',
    ]);
    expect(after.lines[1].delivered).toMatchObject({ downloadFiles: [], deliveryInstructions: null });
  });
});

describe('merchant mark-paid', () => {
  const markPaid = (orderRef: string, key = merchantKey, storeId = store.id) =>
    fetch(`${server.url}/api/merchant/v1/stores/${storeId}/orders/${orderRef}/mark-paid`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
    });

  it('settles a pending order for its full price and fulfils it, as the dashboard does, once', async () => {
    const product = await createProduct(seller, store.id, {
      name: 'Bank transfer guide',
      price: 7.5,
      deliveryMethods: ['deliveryInstructions'],
      deliveryInstructions: 'Read me.',
    });
    const o = await checkout(product.id);
    const number = (await (await merchant('GET', o.orderId)).json()).orderId as string;
    const paid = await markPaid(number);
    expect(paid.status).toBe(200);
    expect(await paid.json()).toMatchObject({ id: o.orderId, status: 'completed', paid: 7.5 });
    expect((await orderRow(o.orderId)).paid_at).not.toBeNull();
    const again = await markPaid(o.orderId);
    expect(again.status).toBe(400);
    expect((await again.json()).code).toBe('order_not_pending');
    const events = await db.query(
      `select count(*)::int as n from event where type = 'order.paid' and payload::text like $1`,
      [`%${o.orderId}%`],
    );
    expect(events.rows[0].n).toBe(1);
  });

  it('needs order:update, the editOrders ceiling, and an order of this store', async () => {
    const product = await createProduct(seller, store.id, { name: 'Pay later', price: 2 });
    const o = await checkout(product.id);
    const readOnly = (await createKeyFor(seller, { scopes: ['order:read'], storeIds: [store.id] })).key;
    const denied = await markPaid(o.orderId, readOnly);
    expect(denied.status).toBe(403);
    expect((await denied.json()).code).toBe('scope_missing');

    const viewer = await registerSeller(server.url);
    await addStaff(seller, store.id, viewer, ['viewOrders']);
    const viewerKey = (await createKeyFor(viewer, { scopes: ['order:update'], storeIds: [store.id] })).key;
    const capped = await markPaid(o.orderId, viewerKey);
    expect(capped.status).toBe(403);
    expect((await capped.json()).code).toBe('permission_missing');

    const elsewhere = await createStoreFor(seller);
    const otherKey = (await createKeyFor(seller, { scopes: ['order:update'], storeIds: [elsewhere.id] })).key;
    expect((await markPaid(o.orderId, otherKey, elsewhere.id)).status).toBe(404);
    expect((await orderRow(o.orderId)).status).toBe('pending');
  });
});

describe('manual payment proof', () => {
  it('lets the buyer upload a proof the seller downloads and approves; the merchant API never shows it', async () => {
    const product = await createProduct(seller, store.id, {
      name: 'Transfer',
      price: 12,
      deliveryMethods: ['deliveryInstructions'],
      deliveryInstructions: 'Thanks!',
    });
    const o = await checkout(product.id);
    const upload = (token: string | null, bytes: Buffer) => {
      const form = new FormData();
      form.append('file', new Blob([bytes], { type: 'image/png' }), 'receipt.png');
      return fetch(`${server.url}/api/orders/${o.orderId}/payment-proof${token ? `?token=${token}` : ''}`, {
        method: 'POST',
        body: form,
      });
    };
    const early = await upload(o.token, Buffer.from('png'));
    expect(early.status).toBe(409); // manual payment not chosen yet
    const start = await fetch(`${server.url}/api/checkout/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orderId: o.orderId, token: o.token, paymentMethod: 'manual' }),
    });
    expect(start.status).toBe(200);
    expect((await upload(null, Buffer.from('png'))).status).toBe(401);
    expect((await upload('w'.repeat(43), Buffer.from('png'))).status).toBe(403);
    const ok = await upload(o.token, Buffer.from('receipt bytes'));
    expect(ok.status).toBe(201);
    expect(await ok.json()).toEqual({
      orderId: o.orderId,
      proof: { name: 'receipt.png', size: 13, contentType: 'image/png' },
    });

    const proof = await fetch(`${server.url}/api/dashboard/stores/${store.id}/orders/${o.orderId}/payment-proof`, {
      headers: { cookie: seller.cookie },
    });
    expect(proof.status).toBe(200);
    expect(await proof.text()).toBe('receipt bytes');
    const detail = await (await merchant('GET', o.orderId)).text();
    expect(detail).not.toMatch(/proof|receipt/i);

    const approved = await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/orders/${o.orderId}/mark-paid`);
    expect((await approved.json()).status).toBe('completed');
    expect((await upload(o.token, Buffer.from('late'))).status).toBe(400); // no longer pending
  });

  it('answers the next request on the connection after refusing a proof before reading it', async () => {
    // Manual payment not chosen: refused (409) before the file is read. The 5 MB body must still
    // be read and dropped, or the kept-alive connection waits for it and the next request sent
    // on it is never answered.
    const product = await createProduct(seller, store.id, {
      name: 'Transfer',
      price: 5,
      deliveryMethods: ['deliveryInstructions'],
      deliveryInstructions: 'Thanks!',
    });
    const o = await checkout(product.id);
    const boundary = 'svc-boundary';
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="receipt.png"\r\nContent-Type: image/png\r\n\r\n`,
      ),
      randomBytes(5_000_000),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const { hostname, port } = new URL(server.url);
    const socket = net.connect(Number(port), hostname);
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.write(
      `POST /api/orders/${o.orderId}/payment-proof?token=${o.token} HTTP/1.1\r\nHost: ${hostname}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body);
    socket.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
    const statuses = () => [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => Number(match[1]));
    const deadline = Date.now() + 10_000;
    while (statuses().length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    socket.destroy();
    expect(statuses()).toEqual([409, 200]);
  });
});

describe('payment proofs kept per order, and their upload limit', () => {
  /** A pending order paid by manual transfer, alone in a store of its own: its store's proofs are its proofs. */
  async function manualOrder() {
    const own = await createStoreFor(seller);
    const product = await createProduct(seller, own.id, {
      name: 'Transfer',
      price: 7,
      deliveryMethods: ['deliveryInstructions'],
      deliveryInstructions: 'Thanks!',
    });
    const o = await checkout(product.id, 1, undefined, own.id);
    const start = await fetch(`${server.url}/api/checkout/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
      body: JSON.stringify({ orderId: o.orderId, token: o.token, paymentMethod: 'manual' }),
    });
    expect(start.status).toBe(200);
    return { ...o, storeId: own.id };
  }

  const sendProof = (o: { orderId: string; token: string }, content: string, ip: string) => {
    const form = new FormData();
    form.append('file', new Blob([content], { type: 'text/plain' }), 'receipt.txt');
    return fetch(`${server.url}/api/orders/${o.orderId}/payment-proof?token=${o.token}`, {
      method: 'POST',
      headers: { 'x-forwarded-for': ip },
      body: form,
    });
  };

  const sellerProof = async (o: { orderId: string; storeId: string }) => {
    const response = await fetch(`${server.url}/api/dashboard/stores/${o.storeId}/orders/${o.orderId}/payment-proof`, {
      headers: { cookie: seller.cookie },
    });
    expect(response.status).toBe(200);
    return response.text();
  };

  /** The contents of the files the server's storage holds for the store's proofs. */
  const storedProofs = async (storeId: string) => {
    const dir = path.join(dataDir, 'files', storeId, 'proofs');
    const names = await readdir(dir);
    return (await Promise.all(names.map((name) => readFile(path.join(dir, name), 'utf8')))).sort();
  };

  it('keeps the newest 5 of 7 proofs: their rows and files only, the seller shown the newest', async () => {
    const o = await manualOrder();
    const ip = clientIp();
    const sent = Array.from({ length: 7 }, (_, i) => `proof ${i + 1} of ${o.orderId}`);
    for (const content of sent) expect((await sendProof(o, content, ip)).status).toBe(201);

    expect(await sellerProof(o)).toBe(sent[6]);
    expect(await storedProofs(o.storeId)).toEqual(sent.slice(2).sort());
    const rows = await db.query('select count(*)::int as n from file where store_id = $1', [o.storeId]);
    expect(rows.rows[0].n).toBe(5);
  });

  it('answers the 11th proof from one client in 10 minutes with 429 and Retry-After, and stores nothing of it', async () => {
    const o = await manualOrder();
    const ip = clientIp();
    for (let i = 1; i <= 10; i++) {
      const response = await sendProof(o, `proof ${i}`, ip);
      expect(response.status).toBe(201);
      expect(response.headers.get('x-ratelimit-remaining')).toBe(String(10 - i));
    }
    const limited = await sendProof(o, 'proof 11', ip);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit-policy')).toBe('"payments.uploadProof";q=10;w=600');
    expect(await limited.json()).toEqual({ error: 'Too many requests. Please try again later.', code: 'rate_limited' });
    expect(await sellerProof(o)).toBe('proof 10');
    expect(await storedProofs(o.storeId)).not.toContain('proof 11');

    // Per client: another address still sends its proof.
    expect((await sendProof(o, 'proof from elsewhere', clientIp())).status).toBe(201);
    expect(await sellerProof(o)).toBe('proof from elsewhere');
  });
});
