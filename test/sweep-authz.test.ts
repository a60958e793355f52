/**
 * Black-box authorisation sweep driven by `openapi/openapi.json` (issue 9, part 4).
 *
 * Two sellers, A and B, each own a store full of objects (products, license keys, a file,
 * coupons, a blacklist entry, webhooks with a delivery, paid and pending orders, a ticket,
 * a staff member, API keys). Every store-scoped operation of the document is called as A (a
 * session for dashboard operations, A's all-scope key for merchant ones) with
 *   (a) B's storeId, with B's object ids and with A's object ids,
 *   (b) A's storeId but B's object ids,
 * for every method, writes with a body that would be valid. Each answer must be 403 or 404 in
 * our error body and must contain none of B's ids, names, e-mails or keys. Buyer routes that
 * take an order id and a token (or e-mail) get A's token on B's order; customer routes get A's
 * customer session (same buyer e-mail in both stores) on B's order; on B's subscription the
 * customer's cancel, resume, payment-method and pay must answer exactly 404. Afterwards B reads its
 * objects back: nothing changed.
 *
 * Operations that are not store-scoped are listed (NOT_STORE_SCOPED) with the reason; the
 * sweep fails when the document gains an operation that is in neither list.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { API_KEY_SCOPES, ERROR_CODES } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { insertInvoicedOrder } from './support/orders.js';
import { buy, TEST_GATEWAY_SECRET } from './support/payments.js';
import {
  addStaff,
  clientIp,
  createKeyFor,
  createStoreFor,
  dashboard,
  registerSeller,
  uniqueEmail,
  type Seller,
} from './support/seller.js';
import { REPO_ROOT, startServer } from './support/server.js';
import { insertSubscriptions } from './support/subscriptions.js';
import { sweep } from './support/sweep.js';

interface Operation {
  method: string;
  path: string;
  key: string;
  security: string | null;
  multipart: boolean;
}

const DOCUMENT = JSON.parse(readFileSync(path.join(REPO_ROOT, 'openapi/openapi.json'), 'utf8')) as {
  paths: Record<
    string,
    Record<string, { security?: Array<Record<string, unknown>>; requestBody?: { content: Record<string, unknown> } }>
  >;
};
const OPERATIONS: Operation[] = Object.entries(DOCUMENT.paths).flatMap(([route, item]) =>
  Object.entries(item)
    .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
    .map(([method, op]) => ({
      method: method.toUpperCase(),
      path: route,
      key: `${method.toUpperCase()} ${route}`,
      security: op.security?.[0] ? Object.keys(op.security[0])[0]! : null,
      multipart: Boolean(op.requestBody?.content['multipart/form-data']),
    })),
);

/** A 1x1 PNG, for each store's product image. */
const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgYGAAAAAEAAH2FzhVAAAAAElFTkSuQmCC',
  'base64',
);

/** Operations swept below that take another store's object by a token, a key id or a customer session. */
const BUYER_AND_ACCOUNT_OPERATIONS = [
  'DELETE /api/dashboard/api-keys/{keyId}',
  'POST /api/dashboard/api-keys',
  'GET /api/dashboard/api-keys',
  'GET /api/dashboard/stores',
  'GET /api/orders/{orderId}/delivery',
  'GET /api/orders/{orderId}/keys',
  'POST /api/orders/{orderId}/try-assign-keys',
  'POST /api/orders/{orderId}/payment-proof',
  'GET /api/orders/{orderId}/files/{fileId}',
  'GET /api/orders/{orderId}/invoice',
  'GET /api/orders/{orderId}/credit-note',
  'POST /api/checkout/enter',
  'POST /api/checkout/start',
  'POST /api/checkout/billing',
  'GET /api/checkout/session',
  'POST /api/feedback/create',
  'POST /api/tickets',
  'GET /api/tickets/{ticketId}',
  'POST /api/tickets/{ticketId}/messages',
  'GET /api/customer/orders',
  'GET /api/customer/subscriptions',
  'POST /api/customer/subscriptions/{subscriptionId}/cancel',
  'POST /api/customer/subscriptions/{subscriptionId}/resume',
  'POST /api/customer/subscriptions/{subscriptionId}/payment-method',
  'POST /api/customer/subscriptions/{subscriptionId}/pay',
  'POST /api/v1/licenses/activate',
  'POST /api/v1/licenses/validate',
  'POST /api/v1/licenses/deactivate',
  'GET /api/customer/orders/{orderId}',
  'GET /api/v1/customer-dashboard/orders',
  'GET /api/v1/customer-dashboard/orders/{orderId}',
  'GET /api/v1/customer-dashboard/profile',
  'POST /api/v1/checkout',
  'POST /api/embed/checkout',
  'POST /api/orders/create',
  'POST /api/coupons/validate',
];

/**
 * Named by a store's id, but public by design: anyone may read them for any store (the control
 * below still reaches them); the sweep's cross-store calls skip them.
 */
const PUBLIC_BY_STORE_ID: Record<string, string> = {
  'GET /api/v1/licenses/jwks/{storeId}': "a store's public keys that verify its offline license leases",
};
const storeScopedOp = (op: { key: string; path: string }) =>
  op.path.includes('{storeId}') && !(op.key in PUBLIC_BY_STORE_ID);

/** Not store-scoped: nothing of another store's can be named, or the data is public by design. */
const NOT_STORE_SCOPED: Record<string, string> = {
  'POST /api/auth/register': 'creates an account; names no store',
  'POST /api/auth/login': 'signs in; names no store',
  'POST /api/auth/logout': "ends the caller's own session",
  'GET /api/auth/session': "the caller's own session",
  'GET /api/dashboard/account': "the caller's own account",
  'POST /api/dashboard/account/two-factor/setup': "the caller's own account",
  'POST /api/dashboard/account/two-factor/confirm': "the caller's own account",
  'POST /api/dashboard/account/two-factor/disable': "the caller's own account",
  'POST /api/dashboard/account/two-factor/recovery-codes': "the caller's own account (needs its password)",
  'PATCH /api/dashboard/account': "the caller's own account (its display name)",
  'POST /api/dashboard/account/password': "the caller's own account (needs its current password)",
  'GET /api/dashboard/account/sessions': "the caller's own sessions",
  'POST /api/dashboard/account/sessions/sign-out-others': "ends the caller's own other sessions",
  'POST /api/dashboard/account/email': "the caller's own account (needs its password)",
  'POST /api/auth/email/confirm': 'takes the mailed token only',
  'GET /api/openapi.json': 'the public OpenAPI document itself',
  'POST /api/auth/forgot': 'answers 204 whatever the address',
  'POST /api/auth/reset': 'takes a reset token only',
  'POST /api/dashboard/stores': 'creates a new store of the caller',
  'GET /api/store/{subdomain}': 'public store lookup (public fields only, by design)',
  'GET /api/stores/by-subdomain/{subdomain}/storefront': 'public catalog (by design)',
  'GET /api/stores/by-subdomain/{subdomain}/products': 'public catalog (by design)',
  'GET /api/v1/cart': 'public cart pricing of public products',
  'POST /api/customer/auth/start': 'e-mails a code to the address; answers 204 either way',
  'POST /api/customer/auth/verify': 'needs the e-mailed code',
  'POST /api/customer/auth/logout': "ends the caller's own customer session",
  'POST /api/checkout/client-gate': "public pre-checkout check of the caller's own e-mail/IP",
  'GET /api/feedback': "a store's public feedback (by design)",
  'POST /api/track': 'public storefront analytics (write-only, 204)',
  'POST /api/payments/{gateway}/webhook':
    'gateway notifications, authenticated by the signature (swept in sweep-bad-input)',
};

// ---------------------------------------------------------------------------------------------
// Two worlds

interface World {
  seller: Seller;
  storeId: string;
  subdomain: string;
  storeName: string;
  merchantKey: string;
  /** A test-mode key (sk_test_) with every scope: the test-data routes take no live key. */
  testKey: string;
  ids: Record<string, string>;
  paidToken: string;
  pendingToken: string;
  buyerEmail: string;
  customerCookie: string;
  fileLink: string;
  /** The key the paid order holds (a license with one instance). */
  soldKey: string;
  /** Strings that must never reach the other seller. */
  secrets: string[];
}

let server: Awaited<ReturnType<typeof startServer>>;
let A: World;
let B: World;
/** One buyer address used in both stores: a customer of A must still not see B's orders. */
const SHARED_BUYER = uniqueEmail('shared-buyer');

async function ok(response: Response, status: number, what: string) {
  const text = await response.text();
  expect(response.status, `${what}: ${text}`).toBe(status);
  return text ? JSON.parse(text) : undefined;
}

function post(pathname: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp(), ...headers },
    body: JSON.stringify(body),
  });
}

async function buildWorld(tag: string): Promise<World> {
  const seller = await registerSeller(server.url, uniqueEmail(`seller-${tag}`));
  const storeName = `Store ${tag} ${randomBytes(4).toString('hex')}`;
  const store = await createStoreFor(seller, storeName);
  const ids: Record<string, string> = { storeId: store.id };
  const staff = await registerSeller(server.url, uniqueEmail(`staff-${tag}`));
  ids.memberId = await addStaff(seller, store.id, staff, ['viewOrders']);
  const merchant = await createKeyFor(seller, { scopes: [...API_KEY_SCOPES], storeIds: [store.id] });
  ids.apiKeyId = merchant.id;
  const productName = `Product ${tag} ${randomBytes(4).toString('hex')}`;
  const product = await createProduct(seller, store.id, {
    name: productName,
    price: 10,
    deliveryMethods: ['licenseKeys', 'downloadFiles'],
    deliveryInstructions: `instructions-${tag}-${randomBytes(4).toString('hex')}`,
  });
  ids.productId = product.id;
  const licenseKeys = Array.from({ length: 4 }, (_, i) => `LK-${tag}-${i}-${randomBytes(6).toString('hex')}`);
  await importKeys(seller, store.id, product.id, licenseKeys);
  ids.licenseKeyId = (
    await ok(
      await dashboard(seller, 'GET', `/api/dashboard/stores/${store.id}/products/${product.id}/license-keys`),
      200,
      'keys',
    )
  ).keys[0].id;
  const fileName = `goods-${tag}-${randomBytes(4).toString('hex')}.txt`;
  const form = new FormData();
  form.append('file', new Blob([Buffer.from(`contents of ${tag}`)], { type: 'text/plain' }), fileName);
  ids.fileId = (
    await ok(
      await fetch(`${server.url}/api/dashboard/stores/${store.id}/products/${product.id}/files`, {
        method: 'POST',
        headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken },
        body: form,
      }),
      201,
      'file',
    )
  ).id;
  const picture = new FormData();
  picture.append('file', new Blob([new Uint8Array(TINY_PNG)], { type: 'image/png' }), 'picture.png');
  ids.imageId = (
    await ok(
      await fetch(`${server.url}/api/dashboard/stores/${store.id}/products/${product.id}/images`, {
        method: 'POST',
        headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken },
        body: picture,
      }),
      201,
      'image',
    )
  ).images[0].id;
  const couponCode = `C${tag.toUpperCase()}${randomBytes(4).toString('hex').toUpperCase()}`;
  ids.couponId = (
    await ok(
      await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/coupons`, {
        code: couponCode,
        discountType: 'percent',
        discountValue: 10,
      }),
      201,
      'coupon',
    )
  ).id;
  const blocked = uniqueEmail(`blocked-${tag}`);
  ids.entryId = (
    await ok(
      await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/blacklist`, {
        kind: 'email',
        value: blocked,
        note: `note-${tag}`,
      }),
      201,
      'blacklist',
    )
  ).id;
  const hookName = `hook-${tag}-${randomBytes(4).toString('hex')}`;
  const hook = await ok(
    await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/webhooks`, {
      name: hookName,
      url: `http://127.0.0.1:9/${tag}`,
      events: ['product.deleted'],
    }),
    201,
    'webhook',
  );
  ids.webhookId = hook.id;
  ids.deliveryId = (
    await ok(await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/webhooks/${hook.id}/test`), 200, 'ping')
  ).delivery.id;
  const placed = async () => {
    const body = await ok(
      await post('/api/orders/create', {
        storeId: store.id,
        cart: [{ productId: product.id, quantity: 1 }],
        email: SHARED_BUYER,
      }),
      201,
      'order',
    );
    return { id: body.order.id as string, number: body.order.orderId as string, token: body.checkoutToken as string };
  };
  const paid = await buy(server.url, { storeId: store.id, productId: product.id, email: SHARED_BUYER });
  const pending = await placed();
  await ok(
    await post('/api/checkout/start', { orderId: pending.id, token: pending.token, paymentMethod: 'manual' }),
    200,
    'checkout start',
  );
  // A proof of the manual payment, so the dashboard's proof download has something to guard.
  const proofText = `proof-${tag}-${randomBytes(4).toString('hex')}`;
  const proof = new FormData();
  proof.append('file', new Blob([proofText], { type: 'text/plain' }), `${proofText}.txt`);
  await ok(
    await fetch(`${server.url}/api/orders/${pending.id}/payment-proof?token=${pending.token}`, {
      method: 'POST',
      body: proof,
    }),
    201,
    'payment proof',
  );
  ids.order = paid.id;
  ids.pendingOrder = pending.id;
  // An order with an invoice and a credit note, so their PDFs have something to guard.
  ids.invoicedOrder = (await insertInvoicedOrder(server.db.url, store.id)).id;
  // The paid order's key is a license: one instance activated by the merchant's software.
  const soldKey = (await ok(await fetch(`${server.url}/api/orders/${paid.id}/keys?token=${paid.token}`), 200, 'keys'))
    .keys[0].key as string;
  const activated = await ok(
    await post('/api/v1/licenses/activate', { productId: product.id, key: soldKey, instanceName: `pc-${tag}` }),
    200,
    'activation',
  );
  ids.licenseId = activated.license.id;
  ids.instanceId = activated.instance.id;
  // The newest of the store's events (the events API's object).
  ids.eventId = (
    await ok(
      await fetch(`${server.url}/api/merchant/v1/stores/${store.id}/events?limit=1`, {
        headers: { authorization: `Bearer ${merchant.key}` },
      }),
      200,
      'events',
    )
  ).events[0].id;
  const subject = `ticket-${tag}-${randomBytes(4).toString('hex')}`;
  ids.ticketId = (
    await ok(
      await post('/api/tickets', { orderId: paid.id, token: paid.token, subject, message: `message-${tag}` }),
      201,
      'ticket',
    )
  ).id;
  // A subscription to the product (as checkout will write it): the subscription routes' object.
  ids.subscriptionId = (
    await insertSubscriptions(server.db.url, store.id, [
      { productId: product.id, productName, customerEmail: SHARED_BUYER },
    ])
  )[0]!;
  // A wipe of the store's test data (none here): its job is the test-data routes' object.
  const testKey = await createKeyFor(seller, { scopes: [...API_KEY_SCOPES], storeIds: [store.id], mode: 'test' });
  ids.jobId = (
    await ok(await dashboard(seller, 'DELETE', `/api/dashboard/stores/${store.id}/test-data`), 202, 'test data job')
  ).id;
  // The customer area: sign in with the code the dev mailbox holds.
  await ok(await post('/api/customer/auth/start', { storeId: store.id, email: SHARED_BUYER }), 204, 'customer code');
  const mailbox = await (await fetch(`${server.url}/dev/mailbox.json`)).json();
  const mail = (mailbox.emails as Array<{ to: string; subject: string; text: string }>).find(
    (m) => m.to.includes(SHARED_BUYER) && m.subject.includes(storeName),
  );
  const code = /\b(\d{6})\b/.exec(mail?.text ?? '')?.[1];
  expect(code, 'a sign-in code').toBeDefined();
  const verified = await post('/api/customer/auth/verify', { storeId: store.id, email: SHARED_BUYER, code });
  await ok(verified.clone(), 200, 'customer verify');
  const customerCookie = verified.headers
    .getSetCookie()
    .find((c) => c.startsWith('svc_customer='))!
    .split(';')[0]!;
  const delivery = await ok(
    await fetch(`${server.url}/api/orders/${paid.id}/delivery?token=${paid.token}`),
    200,
    'delivery',
  );
  const fileLink = new URL(delivery.downloadFiles[0].url).pathname + new URL(delivery.downloadFiles[0].url).search;
  const keyPrefix = merchant.key.slice(0, 14);
  return {
    seller,
    storeId: store.id,
    subdomain: store.subdomain,
    storeName,
    merchantKey: merchant.key,
    testKey: testKey.key,
    ids,
    paidToken: paid.token,
    pendingToken: pending.token,
    buyerEmail: SHARED_BUYER,
    customerCookie,
    fileLink,
    soldKey,
    secrets: [
      ...Object.values(ids),
      store.subdomain,
      storeName,
      seller.email,
      staff.email,
      productName,
      ...licenseKeys,
      fileName,
      couponCode,
      blocked,
      hookName,
      subject,
      paid.token,
      pending.token,
      merchant.key,
      keyPrefix,
      proofText,
    ],
  };
}

/** What B can read of its own store, to compare before and after the sweep. */
async function snapshot(w: World): Promise<Record<string, unknown>> {
  const s = w.storeId;
  const paths = [
    `/api/dashboard/stores/${s}`,
    `/api/dashboard/stores/${s}/members`,
    `/api/dashboard/stores/${s}/products`,
    `/api/dashboard/stores/${s}/products/${w.ids.productId}/license-keys`,
    `/api/dashboard/stores/${s}/products/${w.ids.productId}/files`,
    `/api/dashboard/stores/${s}/coupons`,
    `/api/dashboard/stores/${s}/blacklist`,
    `/api/dashboard/stores/${s}/webhooks`,
    `/api/dashboard/stores/${s}/webhooks/${w.ids.webhookId}/deliveries`,
    `/api/dashboard/stores/${s}/orders`,
    `/api/dashboard/stores/${s}/orders/${w.ids.order}`,
    `/api/dashboard/stores/${s}/orders/${w.ids.pendingOrder}`,
    `/api/dashboard/stores/${s}/tickets`,
    `/api/dashboard/stores/${s}/tickets/${w.ids.ticketId}`,
    `/api/dashboard/stores/${s}/subscriptions`,
    `/api/dashboard/stores/${s}/subscriptions/${w.ids.subscriptionId}`,
    '/api/dashboard/api-keys',
  ];
  const out: Record<string, unknown> = {};
  for (const p of paths) out[p] = await ok(await dashboard(w.seller, 'GET', p), 200, `snapshot ${p}`);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Calls

interface Call {
  label: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | FormData;
  /** Statuses allowed; default 403 or 404. */
  allowed?: number[];
}

/** A body that would be valid for the operation, so only authorisation stands in the way. */
function validBody(key: string): Record<string, unknown> | undefined {
  const table: Record<string, Record<string, unknown>> = {
    'PATCH /api/dashboard/stores/{storeId}': { name: 'Taken over' },
    'PUT /api/dashboard/stores/{storeId}/require-two-factor': { requireTwoFactor: true },
    'PATCH /api/merchant/v1/stores/{storeId}': { name: 'Taken over', accentColor: '#000000' },
    'POST /api/dashboard/stores/{storeId}/members': {
      email: A.seller.email,
      permissions: ['viewOrders', 'editOrders', 'manageProducts', 'manageSettings'],
    },
    'PATCH /api/dashboard/stores/{storeId}/members/{memberId}': {
      permissions: ['viewOrders', 'editOrders', 'manageProducts', 'manageSettings'],
    },
    'PATCH /api/merchant/v1/stores/{storeId}/orders/{orderId}': { note: 'changed by A' },
    'PATCH /api/dashboard/stores/{storeId}/orders/{orderId}': { note: 'changed by A' },
    'POST /api/dashboard/stores/{storeId}/orders/{orderId}/mark-delivered': { content: 'delivered by A' },
    'POST /api/dashboard/stores/{storeId}/products': {
      name: 'Planted by A',
      price: 1,
      deliveryMethods: ['manualDelivery'],
    },
    'PATCH /api/dashboard/stores/{storeId}/products/{productId}': { name: 'Renamed by A', price: 0 },
    'POST /api/dashboard/stores/{storeId}/products/{productId}/license-keys': { keys: ['PLANTED-BY-A'] },
    'POST /api/merchant/v1/stores/{storeId}/products': {
      name: 'Planted by A',
      price: 1,
      deliveryMethods: ['manualDelivery'],
    },
    'PATCH /api/merchant/v1/stores/{storeId}/products/{productId}': { name: 'Renamed by A', price: 0 },
    'PUT /api/dashboard/stores/{storeId}/products/{productId}/images/order': { imageIds: [B.ids.imageId] },
    'PUT /api/merchant/v1/stores/{storeId}/products/{productId}/images/order': { imageIds: [B.ids.imageId] },
    'POST /api/merchant/v1/stores/{storeId}/products/{productId}/license-keys': { keys: ['PLANTED-BY-A'] },
    'POST /api/merchant/v1/stores/{storeId}/coupons': {
      code: 'PLANTEDBYA',
      discountType: 'percent',
      discountValue: 100,
    },
    'PATCH /api/merchant/v1/stores/{storeId}/coupons/{couponId}': {
      discountValue: 100,
      discountType: 'percent',
      maxUses: null,
    },
    'POST /api/dashboard/stores/{storeId}/coupons': { code: 'PLANTEDBYA', discountType: 'percent', discountValue: 100 },
    'PATCH /api/dashboard/stores/{storeId}/coupons/{couponId}': {
      discountValue: 100,
      discountType: 'percent',
      maxUses: null,
    },
    'POST /api/dashboard/stores/{storeId}/blacklist': { kind: 'email', value: 'planted@example.test' },
    'PATCH /api/dashboard/stores/{storeId}/tickets/{ticketId}': { status: 'closed' },
    'POST /api/dashboard/stores/{storeId}/tickets/{ticketId}/messages': { message: 'written by A' },
    'POST /api/merchant/v1/stores/{storeId}/webhooks': {
      name: 'planted',
      url: 'http://127.0.0.1:9/planted',
      events: ['order.created'],
    },
    'PATCH /api/merchant/v1/stores/{storeId}/webhooks/{webhookId}': { url: 'http://127.0.0.1:9/stolen', enabled: true },
    'POST /api/merchant/v1/stores/{storeId}/webhooks/{webhookId}/replay': {
      from: '2020-01-01T00:00:00Z',
      to: '2100-01-01T00:00:00Z',
    },
    'POST /api/dashboard/stores/{storeId}/webhooks': {
      name: 'planted',
      url: 'http://127.0.0.1:9/planted',
      events: ['order.created'],
    },
    'PATCH /api/dashboard/stores/{storeId}/webhooks/{webhookId}': { url: 'http://127.0.0.1:9/stolen', enabled: true },
    'POST /api/dashboard/stores/{storeId}/webhooks/{webhookId}/replay': {
      from: '2020-01-01T00:00:00Z',
      to: '2100-01-01T00:00:00Z',
    },
    'POST /api/merchant/v1/stores/{storeId}/subscriptions/{subscriptionId}/cancel': { atPeriodEnd: false },
    'POST /api/dashboard/stores/{storeId}/subscriptions/{subscriptionId}/cancel': { atPeriodEnd: false },
    'POST /api/merchant/v1/stores/{storeId}/subscriptions/{subscriptionId}/pause': {},
    'POST /api/dashboard/stores/{storeId}/subscriptions/{subscriptionId}/pause': {},
    'PATCH /api/merchant/v1/stores/{storeId}/subscriptions/{subscriptionId}': { quantity: 2, prorate: false },
    'PATCH /api/dashboard/stores/{storeId}/subscriptions/{subscriptionId}': { quantity: 2, prorate: false },
    'POST /api/merchant/v1/stores/{storeId}/subscriptions/{subscriptionId}/resume': {},
    'POST /api/dashboard/stores/{storeId}/subscriptions/{subscriptionId}/resume': {},
    'POST /api/merchant/v1/stores/{storeId}/subscriptions/{subscriptionId}/advance': { to: '2100-01-01T00:00:00Z' },
    'POST /api/dashboard/stores/{storeId}/subscriptions/{subscriptionId}/advance': { to: '2100-01-01T00:00:00Z' },
    // B's own event, to B's endpoint: only A's missing membership stands in the way.
    'POST /api/dashboard/stores/{storeId}/webhooks/{webhookId}/resend': { eventId: B.ids.eventId },
  };
  return table[key];
}

function idFor(op: Operation, name: string, w: World): string {
  if (name === 'orderId' && /\/(invoice|credit-note)$/.test(op.path)) return w.ids.invoicedOrder!;
  if (name === 'orderId') return /mark-paid|cancel|payment-proof/.test(op.path) ? w.ids.pendingOrder! : w.ids.order!;
  if (name === 'keyId') return op.path.includes('/api-keys') ? w.ids.apiKeyId! : w.ids.licenseKeyId!;
  const value = name === 'storeId' ? w.storeId : w.ids[name];
  if (!value) throw new Error(`no ${name} for ${op.key}`);
  return value;
}

/** A report's period: the last 300 days and the next one, around every order of the worlds. */
const REPORT_PERIOD = `?from=${new Date(Date.now() - 300 * 86_400_000).toISOString()}&to=${new Date(Date.now() + 86_400_000).toISOString()}`;

/** A query string that would be valid for the operation (a read that needs one), so only authorisation stands in the way. */
function validQuery(key: string): string {
  const table: Record<string, string> = {
    'GET /api/merchant/v1/stores/{storeId}/subscriptions/{subscriptionId}/preview-update': '?quantity=2',
    'GET /api/dashboard/stores/{storeId}/subscriptions/{subscriptionId}/preview-update': '?quantity=2',
    'GET /api/merchant/v1/stores/{storeId}/reports/tax': REPORT_PERIOD,
    'GET /api/dashboard/stores/{storeId}/reports/tax': REPORT_PERIOD,
  };
  return table[key] ?? '';
}

function fill(op: Operation, storeOf: World, objectsOf: World): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    name === 'storeId' ? storeOf.storeId : idFor(op, name, objectsOf),
  );
  return path + validQuery(op.key);
}

/** A calls a store-scoped operation: a session for dashboard routes, A's key for merchant ones. */
function asA(op: Operation, label: string, url: string): Call {
  const headers: Record<string, string> = { 'x-forwarded-for': clientIp(), accept: 'application/json' };
  if (op.security === 'bearerAuth')
    headers.authorization = `Bearer ${op.path.includes('/test-data') ? A.testKey : A.merchantKey}`;
  else {
    headers.cookie = A.seller.cookie;
    if (op.method !== 'GET') headers['x-csrf-token'] = A.seller.csrfToken;
  }
  let body: string | FormData | undefined;
  if (op.multipart) {
    body = new FormData();
    body.append('file', new Blob([Buffer.from('planted by A')], { type: 'text/plain' }), 'planted.txt');
  } else {
    const json = validBody(op.key);
    if (json) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(json);
    }
  }
  return { label: `${op.key} ${label}`, method: op.method, url, headers, body };
}

function storeScopedCalls(): { calls: Call[]; operations: Set<string> } {
  const calls: Call[] = [];
  const operations = new Set<string>();
  for (const op of OPERATIONS.filter(storeScopedOp)) {
    operations.add(op.key);
    calls.push(asA(op, "(B's store, B's objects)", fill(op, B, B)));
    const others = (op.path.match(/\{(\w+)\}/g) ?? []).filter((p) => p !== '{storeId}');
    if (others.length > 0) {
      calls.push(asA(op, "(B's store, A's objects)", fill(op, B, A)));
      calls.push(asA(op, "(A's store, B's objects)", fill(op, A, B)));
    }
  }
  return { calls, operations };
}

function buyerCalls(): Call[] {
  const h = (extra: Record<string, string> = {}) => ({
    'x-forwarded-for': clientIp(),
    accept: 'application/json',
    ...extra,
  });
  const json = (
    label: string,
    method: string,
    url: string,
    body: unknown,
    extra: Record<string, string> = {},
  ): Call => ({
    label,
    method,
    url,
    headers: h({ 'content-type': 'application/json', ...extra }),
    body: JSON.stringify(body),
  });
  const proof = new FormData();
  proof.append('file', new Blob([Buffer.from('proof by A')], { type: 'text/plain' }), 'proof.txt');
  const bFileInALink = A.fileLink.replace(A.ids.fileId!, B.ids.fileId!);
  const aLinkOnBOrder = A.fileLink.replace(A.ids.order!, B.ids.order!);
  const customer = { cookie: A.customerCookie };
  const session = { cookie: A.seller.cookie, 'x-csrf-token': A.seller.csrfToken };
  return [
    {
      label: "DELETE /api/dashboard/api-keys/{keyId} B's key",
      method: 'DELETE',
      url: `/api/dashboard/api-keys/${B.ids.apiKeyId}`,
      headers: h(session),
    },
    json(
      "POST /api/dashboard/api-keys for B's store",
      'POST',
      '/api/dashboard/api-keys',
      { name: 'steal', scopes: ['order:read'], storeIds: [B.storeId] },
      session,
    ),
    json(
      "POST /api/dashboard/api-keys for A's and B's stores",
      'POST',
      '/api/dashboard/api-keys',
      { name: 'steal', scopes: ['order:read'], storeIds: [A.storeId, B.storeId] },
      session,
    ),
    {
      label: "GET /api/orders/{orderId}/delivery A's token",
      method: 'GET',
      url: `/api/orders/${B.ids.order}/delivery?token=${A.paidToken}`,
      headers: h(),
    },
    // The buyer's e-mail opens that buyer's order by design (interface: "legacy match of the buyer
    // e-mail"); A's own address does not open B's order.
    {
      label: "GET /api/orders/{orderId}/delivery A's e-mail",
      method: 'GET',
      url: `/api/orders/${B.ids.order}/delivery?email=${encodeURIComponent(A.seller.email)}`,
      headers: h(),
    },
    {
      label: "GET /api/orders/{orderId}/keys A's e-mail",
      method: 'GET',
      url: `/api/orders/${B.ids.order}/keys?email=${encodeURIComponent(A.seller.email)}`,
      headers: h(),
    },
    {
      label: "GET /api/orders/{orderId}/delivery A's seller session",
      method: 'GET',
      url: `/api/orders/${B.ids.order}/delivery`,
      headers: h({ cookie: A.seller.cookie }),
      allowed: [401, 403, 404],
    },
    {
      label: "GET /api/orders/{orderId}/delivery A's checkout cookie",
      method: 'GET',
      url: `/api/orders/${B.ids.order}/delivery`,
      headers: h({ cookie: `svc_checkout=${B.ids.order}.${A.paidToken}` }),
    },
    ...(['invoice', 'credit-note'] as const).flatMap((document) => [
      {
        label: `GET /api/orders/{orderId}/${document} A's token`,
        method: 'GET',
        url: `/api/orders/${B.ids.invoicedOrder}/${document}?token=${A.paidToken}`,
        headers: h(),
      },
      {
        label: `GET /api/orders/{orderId}/${document} A's e-mail`,
        method: 'GET',
        url: `/api/orders/${B.ids.invoicedOrder}/${document}?email=${encodeURIComponent(A.seller.email)}`,
        headers: h(),
      },
      {
        label: `GET /api/orders/{orderId}/${document} A's seller session`,
        method: 'GET',
        url: `/api/orders/${B.ids.invoicedOrder}/${document}`,
        headers: h({ cookie: A.seller.cookie }),
        allowed: [401, 403, 404],
      },
      {
        label: `GET /api/orders/{orderId}/${document} A's checkout cookie`,
        method: 'GET',
        url: `/api/orders/${B.ids.invoicedOrder}/${document}`,
        headers: h({ cookie: `svc_checkout=${B.ids.invoicedOrder}.${A.paidToken}` }),
      },
    ]),
    {
      label: "GET /api/orders/{orderId}/keys A's token",
      method: 'GET',
      url: `/api/orders/${B.ids.order}/keys?token=${A.paidToken}`,
      headers: h(),
    },
    {
      label: "GET /api/orders/{orderId}/keys A's checkout cookie",
      method: 'GET',
      url: `/api/orders/${B.ids.order}/keys`,
      headers: h({ cookie: `svc_checkout=${B.ids.order}.${A.paidToken}` }),
    },
    json("POST /api/orders/{orderId}/try-assign-keys A's token", 'POST', `/api/orders/${B.ids.order}/try-assign-keys`, {
      token: A.paidToken,
    }),
    {
      label: "POST /api/orders/{orderId}/payment-proof A's token",
      method: 'POST',
      url: `/api/orders/${B.ids.pendingOrder}/payment-proof?token=${A.pendingToken}`,
      headers: h(),
      body: proof,
    },
    {
      label: "GET /api/orders/{orderId}/files/{fileId} B's file in A's signed link",
      method: 'GET',
      url: bFileInALink,
      headers: h(),
    },
    {
      label: "GET /api/orders/{orderId}/files/{fileId} A's signed link on B's order",
      method: 'GET',
      url: aLinkOnBOrder,
      headers: h(),
    },
    json("POST /api/checkout/enter A's token", 'POST', '/api/checkout/enter', {
      orderId: B.ids.pendingOrder,
      token: A.pendingToken,
    }),
    json("POST /api/checkout/start A's token", 'POST', '/api/checkout/start', {
      orderId: B.ids.pendingOrder,
      token: A.pendingToken,
      paymentMethod: 'manual',
    }),
    json("POST /api/checkout/billing A's token", 'POST', '/api/checkout/billing', {
      orderId: B.ids.pendingOrder,
      token: A.pendingToken,
      country: 'DE',
    }),
    json("POST /api/feedback/create A's token", 'POST', '/api/feedback/create', {
      orderId: B.ids.order,
      token: A.paidToken,
      rating: 1,
      text: 'planted by A',
    }),
    json("POST /api/tickets A's token", 'POST', '/api/tickets', {
      orderId: B.ids.order,
      token: A.paidToken,
      subject: 'planted',
      message: 'planted by A',
    }),
    json(
      "POST /api/tickets A's customer session",
      'POST',
      '/api/tickets',
      { orderId: B.ids.order, subject: 'planted', message: 'planted by A' },
      customer,
    ),
    {
      label: "GET /api/tickets/{ticketId} A's token",
      method: 'GET',
      url: `/api/tickets/${B.ids.ticketId}?token=${A.paidToken}`,
      headers: h(),
    },
    {
      label: "GET /api/tickets/{ticketId} A's customer session",
      method: 'GET',
      url: `/api/tickets/${B.ids.ticketId}`,
      headers: h(customer),
    },
    json("POST /api/tickets/{ticketId}/messages A's token", 'POST', `/api/tickets/${B.ids.ticketId}/messages`, {
      token: A.paidToken,
      message: 'planted by A',
    }),
    json(
      "POST /api/tickets/{ticketId}/messages A's customer session",
      'POST',
      `/api/tickets/${B.ids.ticketId}/messages`,
      { message: 'planted by A' },
      customer,
    ),
    // Another store's subscription is not found to A's buyer: exactly 404, never a 400 or 403 that
    // would tell it exists.
    ...(['cancel', 'resume', 'payment-method', 'pay'] as const).map((action) => ({
      ...json(
        `POST /api/customer/subscriptions/{subscriptionId}/${action} A's customer session on B's subscription`,
        'POST',
        `/api/customer/subscriptions/${B.ids.subscriptionId}/${action}`,
        {},
        customer,
      ),
      allowed: [404],
    })),
    {
      label: "GET /api/customer/orders/{orderId} A's customer session",
      method: 'GET',
      url: `/api/customer/orders/${B.ids.order}`,
      headers: h(customer),
    },
    {
      label: "GET /api/v1/customer-dashboard/orders/{orderId} A's customer session",
      method: 'GET',
      url: `/api/v1/customer-dashboard/orders/${B.ids.order}`,
      headers: h(customer),
    },
    json(
      "POST /api/v1/checkout A's store with B's product",
      'POST',
      '/api/v1/checkout',
      { shopId: A.storeId, cart: [{ productId: B.ids.productId, quantity: 1 }], email: SHARED_BUYER },
      {},
    ),
    json("POST /api/embed/checkout A's store with B's product", 'POST', '/api/embed/checkout', {
      shopId: A.storeId,
      cart: [{ productId: B.ids.productId, quantity: 1 }],
      email: SHARED_BUYER,
    }),
    json("POST /api/orders/create A's store with B's product", 'POST', '/api/orders/create', {
      storeId: A.storeId,
      cart: [{ productId: B.ids.productId, quantity: 1 }],
      email: SHARED_BUYER,
    }),
    json("POST /api/v1/licenses/activate A's key on B's product", 'POST', '/api/v1/licenses/activate', {
      productId: B.ids.productId,
      key: A.soldKey,
      instanceName: 'planted by A',
    }),
    json("POST /api/v1/licenses/validate A's key on B's product", 'POST', '/api/v1/licenses/validate', {
      productId: B.ids.productId,
      key: A.soldKey,
    }),
    json("POST /api/v1/licenses/deactivate A's key on B's product", 'POST', '/api/v1/licenses/deactivate', {
      productId: B.ids.productId,
      key: A.soldKey,
      instanceId: B.ids.instanceId,
    }),
    json("POST /api/v1/licenses/deactivate A's key with B's instance", 'POST', '/api/v1/licenses/deactivate', {
      productId: A.ids.productId,
      key: A.soldKey,
      instanceId: B.ids.instanceId,
    }),
  ].map((call) => ({ allowed: [400, 403, 404], ...call }));
}

// ---------------------------------------------------------------------------------------------
// Checking

const ERROR_CODE_SET = new Set<string>(ERROR_CODES);

async function run(call: Call): Promise<string[]> {
  const response = await fetch(`${server.url}${call.url}`, {
    method: call.method,
    headers: call.headers,
    body: call.body,
  });
  const text = await response.text();
  const problems: string[] = [];
  const allowed = call.allowed ?? [403, 404];
  if (!allowed.includes(response.status)) problems.push(`status ${response.status} (want ${allowed.join('/')})`);
  try {
    const body = JSON.parse(text);
    if (
      typeof body.error !== 'string' ||
      !ERROR_CODE_SET.has(body.code) ||
      Object.keys(body).some((k) => !['error', 'code', 'issues'].includes(k))
    )
      problems.push('not our error body');
  } catch {
    problems.push('body is not JSON');
  }
  // What the request itself carried (an id in the path, a product id in a cart) is not a leak.
  const sent = `${call.url} ${typeof call.body === 'string' ? call.body : ''}`;
  const leaked = B.secrets.filter((secret) => secret.length >= 6 && text.includes(secret) && !sent.includes(secret));
  if (leaked.length > 0) problems.push(`leaks B's ${leaked.join(', ')}`);
  return problems.length > 0
    ? [`${call.label} -> ${response.status}: ${problems.join('; ')} :: ${text.slice(0, 200)}`]
    : [];
}

const runAll = (calls: Call[]) => sweep(calls, run);

// ---------------------------------------------------------------------------------------------

let before: Record<string, unknown>;

beforeAll(async () => {
  server = await startServer({ TEST_GATEWAY_SECRET, MERCHANT_RATE_LIMIT_PER_MINUTE: '1000000' });
  A = await buildWorld('a');
  B = await buildWorld('b');
  before = await snapshot(B);
}, 120_000);

afterAll(() => server?.stop());

describe('authorisation sweep: seller A against seller B', () => {
  it('classifies every operation of the document', () => {
    const storeScoped = OPERATIONS.filter(storeScopedOp).map((op) => op.key);
    const unclassified = OPERATIONS.map((op) => op.key).filter(
      (key) =>
        !storeScoped.includes(key) &&
        !BUYER_AND_ACCOUNT_OPERATIONS.includes(key) &&
        !(key in NOT_STORE_SCOPED) &&
        !(key in PUBLIC_BY_STORE_ID),
    );
    expect(unclassified).toEqual([]);
    expect(storeScoped.length).toBeGreaterThanOrEqual(59);
  });

  it("reaches A's own store with the same calls (control: the paths and credentials are right)", async () => {
    const reads = OPERATIONS.filter((op) => op.path.includes('{storeId}') && op.method === 'GET');
    for (const op of reads) {
      const call = asA(op, '(own)', fill(op, A, A));
      const response = await fetch(`${server.url}${call.url}`, { method: call.method, headers: call.headers });
      expect(response.status, `${call.label}: ${await response.clone().text()}`).toBe(200);
    }
    expect(reads.length).toBeGreaterThan(20);
  });

  it("answers every store-scoped operation with 403 or 404 and none of B's data", async () => {
    const { calls, operations } = storeScopedCalls();
    const started = Date.now();
    const failures = await runAll(calls);
    console.info(
      `authz sweep: ${calls.length} calls over ${operations.size} store-scoped operations in ${Date.now() - started} ms`,
    );
    expect(failures).toEqual([]);
  }, 120_000);

  it("refuses A's tokens, sessions and keys on B's orders, tickets, files and keys", async () => {
    const calls = buyerCalls();
    const failures = await runAll(calls);
    console.info(`authz sweep: ${calls.length} buyer and account calls`);
    expect(failures).toEqual([]);
  });

  it("shows A's lists without anything of B's", async () => {
    const lists: Array<[string, Record<string, string>]> = [
      ['/api/dashboard/stores', { cookie: A.seller.cookie }],
      ['/api/dashboard/api-keys', { cookie: A.seller.cookie }],
      [`/api/dashboard/stores/${A.storeId}/orders`, { cookie: A.seller.cookie }],
      [`/api/dashboard/stores/${A.storeId}/tickets`, { cookie: A.seller.cookie }],
      [`/api/merchant/v1/stores/${A.storeId}/orders`, { authorization: `Bearer ${A.merchantKey}` }],
      [`/api/merchant/v1/stores/${A.storeId}/webhooks`, { authorization: `Bearer ${A.merchantKey}` }],
      ['/api/customer/orders', { cookie: A.customerCookie }],
      ['/api/customer/subscriptions', { cookie: A.customerCookie }],
      ['/api/v1/customer-dashboard/orders', { cookie: A.customerCookie }],
      ['/api/v1/customer-dashboard/profile', { cookie: A.customerCookie }],
      ['/api/checkout/session', { cookie: `svc_checkout=${A.ids.order}.${A.paidToken}` }],
    ];
    for (const [url, headers] of lists) {
      const response = await fetch(`${server.url}${url}`, { headers: { 'x-forwarded-for': clientIp(), ...headers } });
      const text = await response.text();
      expect(response.status, `${url}: ${text}`).toBe(200);
      // The list is A's: it names A's store or order, and nothing of B's.
      expect(
        text.includes(A.storeId) ||
          text.includes(A.ids.order!) ||
          text.includes(SHARED_BUYER) ||
          text.includes(A.ids.subscriptionId!),
        url,
      ).toBe(true);
      expect(
        B.secrets.filter((secret) => secret.length >= 6 && text.includes(secret)),
        url,
      ).toEqual([]);
    }
  });

  it("left every object of B's as it was, and B's key still works", async () => {
    expect(await snapshot(B)).toEqual(before);
    const response = await fetch(`${server.url}/api/merchant/v1/stores/${B.storeId}/orders/${B.ids.order}`, {
      headers: { authorization: `Bearer ${B.merchantKey}` },
    });
    expect(response.status).toBe(200);
    expect((await response.json()).note).toBe('');
  });
});
