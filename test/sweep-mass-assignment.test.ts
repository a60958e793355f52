/**
 * Black-box mass-assignment sweep driven by `openapi/openapi.json` (issue 9, part 4).
 *
 * For every create and update operation (POST, PATCH, PUT with a JSON body, and the body-less
 * POST actions) the sweep sends a body the operation accepts plus one field it does not:
 * fields that exist on the resource or would be dangerous (`id`, another store's `storeId`,
 * `createdAt`, `status`, `paid`, `price`, `ownerId`, `role`, `permissions`, `banned`,
 * `keyHash`, `secret`, `stock`, `uses`, ...), one at a time, plus `__proto__` and
 * `constructor` in the raw JSON. The house rule is strict objects: each must be refused with
 * 400 `validation_failed` naming the field in `issues` (`__proto__`/`constructor` are refused by
 * the JSON parser, 400 `invalid_json`). A field the operation's schema accepts is not sent.
 * A body field named like one of the route's path parameters (`storeId` on
 * `/stores/{storeId}/...`) must be refused too, not silently replaced by the path's value.
 * Where it is safe, the same body without the extra field is then sent once and accepted
 * (control), so the refusal is the field's doing.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { API_KEY_SCOPES } from '@svc/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
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

interface JsonSchema {
  properties?: Record<string, unknown>;
}

interface Operation {
  method: string;
  path: string;
  key: string;
  security: string | null;
  schema: JsonSchema | null;
  pathParams: string[];
}

const DOCUMENT = JSON.parse(readFileSync(path.join(REPO_ROOT, 'openapi/openapi.json'), 'utf8')) as {
  paths: Record<
    string,
    Record<
      string,
      { security?: Array<Record<string, unknown>>; requestBody?: { content: Record<string, { schema: JsonSchema }> } }
    >
  >;
};

/** Routes whose bodies are not JSON objects of a schema: swept for bad input in sweep-bad-input. */
const NOT_JSON = [
  'POST /api/dashboard/stores/{storeId}/products/{productId}/files',
  'POST /api/dashboard/stores/{storeId}/products/{productId}/images',
  'POST /api/merchant/v1/stores/{storeId}/products/{productId}/images',
  'POST /api/dashboard/stores/{storeId}/logo',
  'POST /api/merchant/v1/stores/{storeId}/logo',
  'POST /api/orders/{orderId}/payment-proof',
  'POST /api/payments/{gateway}/webhook',
];

const WRITES: Operation[] = Object.entries(DOCUMENT.paths).flatMap(([route, item]) =>
  Object.entries(item)
    .filter(([method]) => ['post', 'put', 'patch'].includes(method))
    .map(([method, op]) => ({
      method: method.toUpperCase(),
      path: route,
      key: `${method.toUpperCase()} ${route}`,
      security: op.security?.[0] ? Object.keys(op.security[0])[0]! : null,
      schema: op.requestBody?.content['application/json']?.schema ?? null,
      pathParams: [...route.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
    }))
    .filter((op) => !NOT_JSON.includes(op.key)),
);

let server: Awaited<ReturnType<typeof startServer>>;
let seller: Seller;
let spare: Seller;
let otherStoreId = '';
let merchantKey = '';
let customerCookie = '';
let spareCustomerCookie = '';
const ids: Record<string, string> = {};
const tokens: Record<string, string> = {};
let buyer = '';

/** Dangerous or resource fields; each is sent alone on top of a valid body. */
function dangerousFields(): Record<string, unknown> {
  return {
    id: 'zzzzzzzzzzzzzzzzzzzzzzzz',
    storeId: otherStoreId,
    store: otherStoreId,
    createdAt: '2000-01-01T00:00:00.000Z',
    updatedAt: '2000-01-01T00:00:00.000Z',
    deletedAt: null,
    status: 'completed',
    paid: 1000,
    price: 0,
    priceMinor: 0,
    currency: 'XXX',
    ownerId: 'zzzzzzzzzzzzzzzzzzzzzzzz',
    userId: 'zzzzzzzzzzzzzzzzzzzzzzzz',
    role: 'owner',
    permissions: ['viewOrders', 'editOrders', 'manageProducts', 'manageSettings'],
    isAdmin: true,
    banned: false,
    keyHash: 'x'.repeat(64),
    secret: 'whsec_planted',
    secretPrefix: 'whsec_plant',
    stock: 1_000_000,
    uses: 0,
    keyCount: 99,
    failureCount: 0,
    enabled: true,
    scopes: ['order:read', 'order:update', 'webhook:read', 'webhook:write', 'webhook:delete'],
    customerEmail: 'attacker@example.test',
    completedAt: '2000-01-01T00:00:00.000Z',
    deliveredAt: '2000-01-01T00:00:00.000Z',
    lastUsedAt: null,
    revokedAt: null,
    expiresAt: '2100-01-01T00:00:00Z',
    emailVerified: true,
  };
}

/** A body each operation accepts; `control` when sending it once more (without the extra field) is harmless. */
function base(key: string): { body: Record<string, unknown>; control: boolean; status?: number } {
  const s = ids.storeId!;
  const cart = [{ productId: ids.productId!, quantity: 1 }];
  const table: Record<string, { body: Record<string, unknown>; control: boolean; status?: number }> = {
    'POST /api/auth/register': {
      body: { email: uniqueEmail('ma'), password: 'a-long-password-1' },
      control: true,
      status: 201,
    },
    'POST /api/auth/login': { body: { email: seller.email, password: seller.password }, control: true },
    'POST /api/auth/logout': { body: {}, control: false },
    // The seller's own account: the controls would change its password, address or sessions.
    'POST /api/dashboard/account/two-factor/setup': { body: {}, control: true },
    'POST /api/dashboard/account/two-factor/confirm': { body: { code: '000000' }, control: false },
    'POST /api/dashboard/account/two-factor/disable': { body: { password: 'not the password' }, control: false },
    'POST /api/dashboard/account/two-factor/recovery-codes': { body: { password: 'not the password' }, control: false },
    'PATCH /api/dashboard/account': { body: { name: 'Mass Assignment' }, control: true },
    'POST /api/dashboard/account/password': {
      body: { currentPassword: 'not the password', newPassword: 'a-long-password-1' },
      control: false,
    },
    'POST /api/dashboard/account/sessions/sign-out-others': { body: {}, control: false },
    'POST /api/dashboard/account/email': {
      body: { newEmail: uniqueEmail('ma'), password: 'not the password' },
      control: false,
    },
    'POST /api/auth/email/confirm': { body: { token: 'x'.repeat(40) }, control: false },
    'POST /api/auth/forgot': { body: { email: seller.email }, control: true, status: 204 },
    'POST /api/auth/reset': { body: { token: 'x'.repeat(40), password: 'a-long-password-1' }, control: false },
    'POST /api/dashboard/stores': {
      body: { name: 'Second', subdomain: `ma-${randomBytes(4).toString('hex')}` },
      control: true,
      status: 201,
    },
    'PATCH /api/dashboard/stores/{storeId}': { body: { name: 'Renamed' }, control: true },
    // Off: the sweep's seller has no two-factor sign-in, and on would shut them out of their store.
    'PUT /api/dashboard/stores/{storeId}/require-two-factor': { body: { requireTwoFactor: false }, control: true },
    'POST /api/dashboard/stores/{storeId}/members': {
      body: { email: spare.email, permissions: ['viewOrders'] },
      control: true,
      status: 201,
    },
    'PATCH /api/dashboard/stores/{storeId}/members/{memberId}': {
      body: { permissions: ['viewOrders'] },
      control: true,
    },
    'POST /api/dashboard/api-keys': {
      body: { name: 'k', scopes: ['order:read'], storeIds: [s] },
      control: true,
      status: 201,
    },
    'PATCH /api/merchant/v1/stores/{storeId}/orders/{orderId}': { body: { note: 'n' }, control: true },
    'PATCH /api/merchant/v1/stores/{storeId}': { body: { name: 'Renamed by key' }, control: true },
    'PATCH /api/dashboard/stores/{storeId}/orders/{orderId}': { body: { note: 'n' }, control: true },
    'POST /api/dashboard/stores/{storeId}/orders/{orderId}/mark-delivered': {
      body: { content: 'here it is' },
      control: true,
    },
    'POST /api/dashboard/stores/{storeId}/orders/{orderId}/mark-paid': { body: {}, control: false },
    'POST /api/merchant/v1/stores/{storeId}/orders/{orderId}/mark-paid': { body: {}, control: false },
    'POST /api/dashboard/stores/{storeId}/orders/{orderId}/refund': { body: {}, control: false },
    'POST /api/merchant/v1/stores/{storeId}/orders/{orderId}/refund': { body: {}, control: false },
    'POST /api/dashboard/stores/{storeId}/orders/{orderId}/cancel': { body: {}, control: false },
    'POST /api/customer/auth/start': { body: { storeId: s, email: buyer }, control: false },
    'POST /api/customer/auth/verify': { body: { storeId: s, email: buyer, code: '000000' }, control: false },
    'POST /api/customer/auth/logout': { body: {}, control: false },
    'POST /api/dashboard/stores/{storeId}/products': {
      body: { name: 'P', price: 1, deliveryMethods: ['manualDelivery'] },
      control: true,
      status: 201,
    },
    'PATCH /api/dashboard/stores/{storeId}/products/{productId}': { body: { name: 'Renamed product' }, control: true },
    // The sweep's product has no images: the empty order names all of them.
    'PUT /api/dashboard/stores/{storeId}/products/{productId}/images/order': { body: { imageIds: [] }, control: true },
    'PUT /api/merchant/v1/stores/{storeId}/products/{productId}/images/order': {
      body: { imageIds: [] },
      control: true,
    },
    'POST /api/dashboard/stores/{storeId}/products/{productId}/license-keys': {
      body: { keys: ['MA-KEY-CONTROL'] },
      control: true,
    },
    'POST /api/v1/checkout': { body: { shopId: s, cart, email: buyer }, control: true },
    'POST /api/embed/checkout': { body: { shopId: s, cart, email: buyer }, control: true },
    'POST /api/orders/create': { body: { storeId: s, cart, email: buyer }, control: true, status: 201 },
    'POST /api/checkout/enter': { body: { orderId: ids.pendingOrder!, token: tokens.pending! }, control: true },
    'POST /api/checkout/start': {
      body: { orderId: ids.pendingOrder!, token: tokens.pending!, paymentMethod: 'manual' },
      control: true,
    },
    'POST /api/checkout/billing': {
      body: { orderId: ids.pendingOrder!, token: tokens.pending!, country: 'DE' },
      control: true,
    },
    'POST /api/dashboard/stores/{storeId}/coupons': {
      body: { code: 'MACONTROL', discountType: 'percent', discountValue: 10 },
      control: true,
      status: 201,
    },
    'PATCH /api/dashboard/stores/{storeId}/coupons/{couponId}': { body: { discountValue: 15 }, control: true },
    'POST /api/merchant/v1/stores/{storeId}/coupons': {
      body: { code: 'MAMERCHANT', discountType: 'percent', discountValue: 10 },
      control: true,
      status: 201,
    },
    'POST /api/merchant/v1/stores/{storeId}/products': {
      body: { name: 'P', price: 1, deliveryMethods: ['manualDelivery'] },
      control: true,
      status: 201,
    },
    'PATCH /api/merchant/v1/stores/{storeId}/products/{productId}': { body: { name: 'Renamed by key' }, control: true },
    'POST /api/merchant/v1/stores/{storeId}/products/{productId}/license-keys': {
      body: { keys: ['MA-MERCHANT-KEY'] },
      control: true,
    },
    'PATCH /api/merchant/v1/stores/{storeId}/coupons/{couponId}': { body: { discountValue: 15 }, control: true },
    'POST /api/coupons/validate': { body: { storeId: s, code: 'SAVE10' }, control: true },
    'POST /api/dashboard/stores/{storeId}/blacklist': {
      body: { kind: 'email', value: 'ma-control@example.test' },
      control: true,
      status: 201,
    },
    'POST /api/checkout/client-gate': { body: { storeId: s }, control: true },
    'POST /api/feedback/create': {
      body: { orderId: ids.order!, token: tokens.order!, rating: 5, text: 'great' },
      control: true,
      status: 201,
    },
    'POST /api/track': { body: { storeId: s, type: 'page_view' }, control: true, status: 204 },
    'POST /api/orders/{orderId}/try-assign-keys': { body: { token: tokens.order! }, control: true },
    'POST /api/tickets': {
      body: { orderId: ids.order!, token: tokens.order!, subject: 's', message: 'm' },
      control: true,
      status: 201,
    },
    'POST /api/tickets/{ticketId}/messages': {
      body: { token: tokens.order!, message: 'm' },
      control: true,
      status: 201,
    },
    'PATCH /api/dashboard/stores/{storeId}/tickets/{ticketId}': { body: { status: 'open' }, control: true },
    'POST /api/dashboard/stores/{storeId}/tickets/{ticketId}/messages': {
      body: { message: 'm' },
      control: true,
      status: 201,
    },
    'POST /api/merchant/v1/stores/{storeId}/webhooks': {
      body: { name: 'w', url: 'http://127.0.0.1:9/w', events: ['order.created'] },
      control: true,
      status: 201,
    },
    'PATCH /api/merchant/v1/stores/{storeId}/webhooks/{webhookId}': { body: { name: 'renamed' }, control: true },
    'POST /api/merchant/v1/stores/{storeId}/webhooks/{webhookId}/rotate': { body: {}, control: true },
    'POST /api/merchant/v1/stores/{storeId}/webhooks/{webhookId}/test': { body: {}, control: false },
    'POST /api/merchant/v1/stores/{storeId}/webhooks/{webhookId}/deliveries/{deliveryId}/retry': {
      body: {},
      control: false,
    },
    'POST /api/merchant/v1/stores/{storeId}/webhooks/{webhookId}/replay': {
      body: { from: '2020-01-01T00:00:00Z', to: '2020-01-02T00:00:00Z' },
      control: true,
    },
    'POST /api/dashboard/stores/{storeId}/webhooks': {
      body: { name: 'w', url: 'http://127.0.0.1:9/w', events: ['order.created'] },
      control: true,
      status: 201,
    },
    'PATCH /api/dashboard/stores/{storeId}/webhooks/{webhookId}': { body: { name: 'renamed' }, control: true },
    'POST /api/dashboard/stores/{storeId}/webhooks/{webhookId}/rotate': { body: {}, control: true },
    'POST /api/dashboard/stores/{storeId}/webhooks/{webhookId}/test': { body: {}, control: false },
    'POST /api/dashboard/stores/{storeId}/webhooks/{webhookId}/deliveries/{deliveryId}/retry': {
      body: {},
      control: false,
    },
    'POST /api/dashboard/stores/{storeId}/webhooks/{webhookId}/replay': {
      body: { from: '2020-01-01T00:00:00Z', to: '2020-01-02T00:00:00Z' },
      control: true,
    },
    // No event of the store has this id: the control is a 404, the extra field a 400 before it.
    'POST /api/dashboard/stores/{storeId}/webhooks/{webhookId}/resend': {
      body: { eventId: `evt_${'x'.repeat(24)}` },
      control: false,
    },
    'POST /api/v1/licenses/activate': {
      body: { productId: ids.productId!, key: tokens.licenseKey!, instanceName: 'ma' },
      control: true,
    },
    'POST /api/v1/licenses/validate': { body: { productId: ids.productId!, key: tokens.licenseKey! }, control: true },
    'POST /api/v1/licenses/deactivate': {
      body: { productId: ids.productId!, key: tokens.licenseKey!, instanceId: ids.instanceId! },
      control: false,
    },
    'POST /api/merchant/v1/stores/{storeId}/licenses/{licenseId}/disable': { body: {}, control: true },
    'POST /api/merchant/v1/stores/{storeId}/licenses/{licenseId}/enable': { body: {}, control: true },
    'POST /api/dashboard/stores/{storeId}/licenses/{licenseId}/disable': { body: {}, control: true },
    'POST /api/dashboard/stores/{storeId}/licenses/{licenseId}/enable': { body: {}, control: true },
    'POST /api/dashboard/stores/{storeId}/licenses/search': { body: { key: tokens.licenseKey! }, control: true },
    // A rotation takes no body: the control rotates the store's key of the caller's mode.
    'POST /api/merchant/v1/stores/{storeId}/license-signing-keys/rotate': { body: {}, control: true },
    'POST /api/dashboard/stores/{storeId}/license-signing-keys/rotate': { body: {}, control: true },
    // Cancel at the period end once (the merchant route's control); a second is 409 by design.
    'POST /api/merchant/v1/stores/{storeId}/subscriptions/{subscriptionId}/cancel': {
      body: { atPeriodEnd: true },
      control: true,
    },
    'POST /api/dashboard/stores/{storeId}/subscriptions/{subscriptionId}/cancel': {
      body: { atPeriodEnd: true },
      control: false,
    },
    // Pause (another subscription: one set to cancel cannot be paused); pausing again is allowed.
    'POST /api/merchant/v1/stores/{storeId}/subscriptions/{subscriptionId}/pause': { body: {}, control: true },
    'POST /api/dashboard/stores/{storeId}/subscriptions/{subscriptionId}/pause': { body: {}, control: true },
    // A change for the next renewal (no charge): allowed again and again.
    'PATCH /api/merchant/v1/stores/{storeId}/subscriptions/{subscriptionId}': {
      body: { quantity: 2, prorate: false },
      control: true,
    },
    'PATCH /api/dashboard/stores/{storeId}/subscriptions/{subscriptionId}': {
      body: { quantity: 3, prorate: false },
      control: true,
    },
    // Resume answers 409 unless a cancel or pause is scheduled (the sweep's order decides): no control.
    'POST /api/merchant/v1/stores/{storeId}/subscriptions/{subscriptionId}/resume': { body: {}, control: false },
    'POST /api/dashboard/stores/{storeId}/subscriptions/{subscriptionId}/resume': { body: {}, control: false },
    // A live subscription's clock is not advanced (403 test_key_required): no control.
    'POST /api/merchant/v1/stores/{storeId}/subscriptions/{subscriptionId}/advance': {
      body: { to: '2100-01-01T00:00:00Z' },
      control: false,
    },
    'POST /api/dashboard/stores/{storeId}/subscriptions/{subscriptionId}/advance': {
      body: { to: '2100-01-01T00:00:00Z' },
      control: false,
    },
    // The buyer's own: the sweep's subscription is not the signed-in buyer's (404), so no control;
    // their rules are flows/customer-subscriptions.test.ts's and the browser test's.
    'POST /api/customer/subscriptions/{subscriptionId}/cancel': { body: { comment: 'Too dear.' }, control: false },
    'POST /api/customer/subscriptions/{subscriptionId}/resume': { body: {}, control: false },
    'POST /api/customer/subscriptions/{subscriptionId}/payment-method': { body: {}, control: false },
    'POST /api/customer/subscriptions/{subscriptionId}/pay': { body: {}, control: false },
  };
  const entry = table[key];
  if (!entry) throw new Error(`no valid body for ${key}: add one to the table`);
  return structuredClone(entry);
}

function pathValue(op: Operation, name: string): string {
  // mark-paid and cancel need a pending order; every other order route the paid one.
  if (name === 'orderId') return /mark-paid|cancel/.test(op.path) ? ids.pendingOrder! : ids.order!;
  if (name === 'subscriptionId') return op.path.endsWith('/pause') ? ids.pausedSubscription! : ids.subscriptionId!;
  const value = ids[name];
  if (!value) throw new Error(`no id for ${name}`);
  return value;
}

function request(op: Operation, body: string): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-forwarded-for': clientIp() };
  const logout = op.key === 'POST /api/auth/logout' || op.key === 'POST /api/customer/auth/logout';
  if (op.security === 'sessionCookie' || op.key === 'POST /api/auth/logout') {
    const who = logout ? spare : seller;
    headers.cookie = who.cookie;
    headers['x-csrf-token'] = who.csrfToken;
  } else if (op.security === 'bearerAuth') headers.authorization = `Bearer ${merchantKey}`;
  else if (op.security === 'customerCookie' || op.key === 'POST /api/customer/auth/logout')
    headers.cookie = logout ? spareCustomerCookie : customerCookie;
  const url = op.path.replace(/\{(\w+)\}/g, (_, name: string) => pathValue(op, name));
  return fetch(`${server.url}${url}`, { method: op.method, headers, body });
}

async function ok(response: Response, status: number, what: string) {
  const text = await response.text();
  expect(response.status, `${what}: ${text}`).toBe(status);
  return text ? JSON.parse(text) : undefined;
}

function post(pathname: string, body: unknown) {
  return fetch(`${server.url}${pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify(body),
  });
}

async function customerSession(storeId: string, email: string): Promise<string> {
  await ok(await post('/api/customer/auth/start', { storeId, email }), 204, 'code');
  const mailbox = await (await fetch(`${server.url}/dev/mailbox.json`)).json();
  const code = /\b(\d{6})\b/.exec(
    (mailbox.emails as Array<{ to: string; text: string }>).find((m) => m.to.includes(email))?.text ?? '',
  )?.[1];
  const verified = await post('/api/customer/auth/verify', { storeId, email, code });
  await ok(verified.clone(), 200, 'verify');
  return verified.headers
    .getSetCookie()
    .find((c) => c.startsWith('svc_customer='))!
    .split(';')[0]!;
}

beforeAll(async () => {
  server = await startServer({ TEST_GATEWAY_SECRET, MERCHANT_RATE_LIMIT_PER_MINUTE: '1000000' });
  seller = await registerSeller(server.url);
  spare = await registerSeller(server.url);
  const store = await createStoreFor(seller);
  ids.storeId = store.id;
  otherStoreId = (await createStoreFor(await registerSeller(server.url), 'Other seller')).id;
  ids.memberId = await addStaff(seller, store.id, await registerSeller(server.url), ['viewOrders']);
  merchantKey = (await createKeyFor(seller, { scopes: [...API_KEY_SCOPES], storeIds: [store.id] })).key;
  const product = await createProduct(seller, store.id, {
    name: 'MA product',
    price: 10,
    deliveryMethods: ['licenseKeys'],
  });
  ids.productId = product.id;
  await importKeys(seller, store.id, product.id, ['MA-1', 'MA-2', 'MA-3']);
  ids.couponId = (
    await ok(
      await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/coupons`, {
        code: 'SAVE10',
        discountType: 'percent',
        discountValue: 10,
      }),
      201,
      'coupon',
    )
  ).id;
  ids.webhookId = (
    await ok(
      await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/webhooks`, {
        name: 'hook',
        url: 'http://127.0.0.1:9/hook',
        events: ['order.created'],
      }),
      201,
      'webhook',
    )
  ).id;
  ids.deliveryId = (
    await ok(
      await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/webhooks/${ids.webhookId}/test`),
      200,
      'ping',
    )
  ).delivery.id;
  buyer = uniqueEmail('ma-buyer');
  const place = async () => {
    const body = await ok(
      await post('/api/orders/create', {
        storeId: store.id,
        cart: [{ productId: product.id, quantity: 1 }],
        email: buyer,
      }),
      201,
      'order',
    );
    return { id: body.order.id as string, token: body.checkoutToken as string };
  };
  const paid = await buy(server.url, { storeId: store.id, productId: product.id, email: buyer });
  ids.order = paid.id;
  tokens.order = paid.token;
  // The paid order's key is a license with one instance (the license routes' ids and bodies).
  tokens.licenseKey = (
    await ok(await fetch(`${server.url}/api/orders/${paid.id}/keys?token=${paid.token}`), 200, 'keys')
  ).keys[0].key;
  const activated = await ok(
    await post('/api/v1/licenses/activate', { productId: product.id, key: tokens.licenseKey, instanceName: 'ma' }),
    200,
    'activation',
  );
  ids.licenseId = activated.license.id;
  ids.instanceId = activated.instance.id;
  const pending = await place();
  ids.pendingOrder = pending.id;
  tokens.pending = pending.token;
  ids.ticketId = (
    await ok(
      await post('/api/tickets', { orderId: paid.id, token: paid.token, subject: 'Help', message: 'Hi' }),
      201,
      'ticket',
    )
  ).id;
  // Two active subscriptions (the subscription routes' ids): one to cancel, one to pause.
  const subscriptions = await insertSubscriptions(server.db.url, store.id, [
    { customerEmail: buyer },
    { customerEmail: buyer },
  ]);
  ids.subscriptionId = subscriptions[0]!;
  ids.pausedSubscription = subscriptions[1]!;
  customerCookie = await customerSession(store.id, buyer);
  spareCustomerCookie = await customerSession(store.id, uniqueEmail('spare'));
}, 120_000);

afterAll(() => server?.stop());

interface Finding {
  op: string;
  field: string;
  status: number;
  text: string;
}

describe('mass-assignment sweep over every create and update operation', () => {
  const refused: string[] = [];

  it('refuses every field the schema does not accept, naming it', async () => {
    const findings: Finding[] = [];
    let sent = 0;
    const jobs: Array<() => Promise<void>> = [];
    for (const op of WRITES) {
      const accepted = new Set(Object.keys(op.schema?.properties ?? {}));
      const { body } = base(op.key);
      // Resource and dangerous fields, and the route's own path parameters (never a body field).
      const extras = {
        ...dangerousFields(),
        ...Object.fromEntries(
          op.pathParams.map((name) => [name, name === 'storeId' ? otherStoreId : 'zzzzzzzzzzzzzzzzzzzzzzzz']),
        ),
      };
      for (const [field, value] of Object.entries(extras)) {
        if (accepted.has(field) || field in body) continue;
        jobs.push(async () => {
          sent++;
          const response = await request(op, JSON.stringify({ ...body, [field]: value }));
          const text = await response.text();
          let named: boolean;
          try {
            const parsed = JSON.parse(text);
            named =
              parsed.code === 'validation_failed' &&
              (parsed.issues ?? []).some(
                (i: { path: string; message: string }) => i.path === field && i.message === 'Unknown field.',
              );
          } catch {
            named = false;
          }
          if (response.status !== 400 || !named)
            findings.push({ op: op.key, field, status: response.status, text: text.slice(0, 200) });
          else refused.push(`${op.key} ${field}`);
        });
      }
      for (const [label, member] of [
        ['__proto__', '"__proto__":{"isAdmin":true,"storeId":"x"}'],
        ['constructor', '"constructor":{"prototype":{"isAdmin":true}}'],
      ] as const) {
        jobs.push(async () => {
          sent++;
          const rest = JSON.stringify(body).slice(1);
          const response = await request(op, `{${member}${rest === '}' ? '' : ','}${rest}`);
          const text = await response.text();
          if (response.status !== 400 || !/"code":"invalid_json"/.test(text))
            findings.push({ op: op.key, field: label, status: response.status, text: text.slice(0, 200) });
        });
      }
    }
    let next = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (next < jobs.length) await jobs[next++]!();
      }),
    );
    console.info(
      `mass-assignment sweep: ${sent} requests over ${WRITES.length} operations in ${Date.now() - started} ms`,
    );
    expect(findings.map((f) => `${f.op} +${f.field} -> ${f.status}: ${f.text}`)).toEqual([]);
    expect(WRITES.length).toBeGreaterThan(45);
  }, 120_000);

  it('accepts the same bodies without the extra field (control)', async () => {
    expect(refused.length).toBeGreaterThan(500);
    const failures: string[] = [];
    for (const op of WRITES) {
      const { body, control, status } = base(op.key);
      if (!control) continue;
      const response = await request(op, JSON.stringify(body));
      if (response.status !== (status ?? 200))
        failures.push(`${op.key} -> ${response.status}: ${(await response.text()).slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  });

  it('left the resources without any of the planted values', async () => {
    const s = ids.storeId!;
    const product = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${s}/products/${ids.productId}`)
    ).json();
    expect(product).toMatchObject({
      id: ids.productId,
      storeId: s,
      price: 10,
      status: 'active',
      stock: expect.any(Number),
    });
    expect(product.stock).toBeLessThan(10);
    const coupon = await (await dashboard(seller, 'GET', `/api/dashboard/stores/${s}/coupons/${ids.couponId}`)).json();
    expect(coupon).toMatchObject({ id: ids.couponId, storeId: s, uses: 0, active: true });
    const order = await (
      await dashboard(seller, 'GET', `/api/dashboard/stores/${s}/orders/${ids.pendingOrder}`)
    ).json();
    expect(order).toMatchObject({ status: 'pending', paid: 0, price: 10, storeId: s });
    const otherStoreProducts = await fetch(`${server.url}/api/dashboard/stores/${otherStoreId}/products`, {
      headers: { cookie: seller.cookie },
    });
    expect(otherStoreProducts.status).toBe(403);
    const members = await (await dashboard(seller, 'GET', `/api/dashboard/stores/${s}/members`)).json();
    for (const member of members.members as Array<{ userId?: string; role: string; permissions: string[] }>) {
      if (member.role !== 'owner') expect(member.permissions).toEqual(['viewOrders']);
    }
  });
});
