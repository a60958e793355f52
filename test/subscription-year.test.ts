/**
 * Black-box, on a started server: a buyer's year of a subscription in minutes (issue 39), driven
 * by the test clock's `advance` with a test key, through the merchant API, the buyer's checkout
 * and the test pay page's cards, the License API, a webhook endpoint and the development mailbox.
 *
 * - `Declines renewals`: the key arrives once and activates; past the trial the renewal is
 *   declined: past_due, `subscription.past_due` at the endpoint, an e-mail with a pay link, the
 *   license still valid inside the grace; past the last retry: canceled for payment_failed, the
 *   license expired.
 * - `Succeeds`: 12 monthly renewals by advance, 12 paid renewal orders, exactly 13 `order.paid`
 *   events, `expiresAt` moved each time, the same key and instance throughout; a cancel at the
 *   period end, then advance: `subscription.ended`, the license expired.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { previewToken, subscribeOnTestPage } from './support/preview.js';
import { createKeyFor, createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

let server: Awaited<ReturnType<typeof startServer>>;
let receiver: WebhookReceiver;
let owner: Seller;
let store: { id: string };
let key: string;
let preview: string;
let product: { id: string; plans: Array<{ id: string; interval: string }> };

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ip = () => `198.51.100.${1 + (randomBytes(1)[0]! % 250)}`;

async function json(response: Response, status: number) {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return text ? JSON.parse(text) : undefined;
}

function merchant(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.url}/api/merchant/v1/stores/${store.id}${path}`, {
    method,
    headers: {
      accept: 'application/json',
      authorization: `Bearer ${key}`,
      'x-forwarded-for': ip(),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip(), ...headers },
    body: JSON.stringify(body),
  });

const license = (action: 'activate' | 'validate', body: Record<string, unknown>) =>
  post(`/api/v1/licenses/${action}`, { productId: product.id, ...body }).then((r) => json(r, 200));

/** A buyer checks out the monthly plan with the test gateway and pays on its page with `card`. */
async function subscribe(card: string) {
  const email = `buyer-${randomBytes(4).toString('hex')}@example.test`;
  const monthly = product.plans.find((plan) => plan.interval === 'month')!;
  const { orderId, token } = await subscribeOnTestPage(
    server.url,
    { storeId: store.id, productId: product.id, planId: monthly.id, email, preview, card },
    ip,
  );
  const delivered = await json(await fetch(`${server.url}/api/orders/${orderId}/keys?token=${token}`), 200);
  expect(delivered.keys).toHaveLength(1);
  const order = await json(await merchant('GET', `/orders/${orderId}`), 200);
  expect(order).toMatchObject({ billingReason: 'subscription_create', price: 0, status: 'completed' });
  return {
    email,
    orderId,
    key: delivered.keys[0].key as string,
    subscriptionId: order.subscriptionId as string,
  };
}

const advance = (subscriptionId: string, to: number | string) =>
  merchant('POST', `/subscriptions/${subscriptionId}/advance`, {
    to: typeof to === 'number' ? new Date(to).toISOString() : to,
  }).then((r) => json(r, 200));

beforeAll(async () => {
  server = await startServer({ WEBHOOK_POLL_MS: '100' });
  receiver = await startWebhookReceiver();
  owner = await registerSeller(server.url);
  store = await createStoreFor(owner, 'Year Shop');
  await json(
    await dashboard(owner, 'PATCH', `/api/dashboard/stores/${store.id}`, { settings: { paymentMethods: ['test'] } }),
    200,
  );
  key = (
    await createKeyFor(owner, {
      scopes: [
        'product:read',
        'product:write',
        'order:read',
        'subscription:read',
        'subscription:write',
        'webhook:write',
        'event:read',
      ],
      storeIds: [store.id],
      mode: 'test',
    })
  ).key;
  product = await json(
    await merchant('POST', '/products', {
      name: 'Editor Pro',
      price: 9,
      deliveryMethods: ['licenseKeys'],
      plans: [
        { interval: 'month', intervalCount: 1, price: 9, trialDays: 7 },
        { interval: 'year', intervalCount: 1, price: 90, trialDays: 7 },
      ],
    }),
    201,
  );
  expect(product.plans).toHaveLength(2);
  const keys = Array.from({ length: 3 }, () => `EDIT-${randomBytes(8).toString('hex').toUpperCase()}`);
  await json(await merchant('POST', `/products/${product.id}/license-keys`, { keys }), 200);
  await json(
    await merchant('POST', '/webhooks', {
      name: 'subscriptions',
      url: `${receiver.url}/subscriptions`,
      events: ['subscription.past_due', 'subscription.ended'],
    }),
    201,
  );
  preview = await previewToken(owner, store.id);
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await server?.stop();
});

describe("a buyer's year in minutes", () => {
  it('Declines renewals: past due with an e-mailed link and a license valid in the grace, then canceled for payment_failed and expired', async () => {
    const buyer = await subscribe('declines_renewals');
    const activated = await license('activate', { key: buyer.key, instanceName: 'laptop' });
    expect(activated).toMatchObject({ activated: true, license: { status: 'active' } });
    const start = await json(await merchant('GET', `/subscriptions/${buyer.subscriptionId}`), 200);
    expect(start).toMatchObject({ status: 'trialing', livemode: false });
    const trialEnd = Date.parse(start.trialEnd);

    const pastDue = await advance(buyer.subscriptionId, trialEnd + HOUR);
    expect(pastDue.subscription).toMatchObject({ status: 'past_due', pastDueAt: new Date(trialEnd).toISOString() });
    expect(pastDue.events).toContain('subscription.past_due');
    const [hook] = await receiver.waitFor(1, {
      timeoutMs: 20_000,
      where: (hit) => (hit.body as { event?: string })?.event === 'subscription.past_due',
    });
    expect(hook!.body).toMatchObject({ data: { subscription: { id: buyer.subscriptionId, status: 'past_due' } } });
    const { emails } = await json(await fetch(`${server.url}/dev/mailbox.json`), 200);
    const failed = emails.filter(
      (m: { to: string; subject: string }) => m.to === buyer.email && /Payment failed/.test(m.subject),
    );
    expect(failed).toHaveLength(1);
    expect(failed[0].text).toMatch(new RegExp(`/checkout/${pastDue.orders[0].id}\\?token=`));
    // Inside the grace (7 days from the failure) the software still runs.
    expect(await license('validate', { key: buyer.key })).toMatchObject({ valid: true, reason: null });

    const ended = await advance(buyer.subscriptionId, trialEnd + 17 * DAY);
    expect(ended.subscription).toMatchObject({ status: 'canceled', cancellationReason: 'payment_failed' });
    expect(ended.events).toContain('subscription.ended');
    expect(await license('validate', { key: buyer.key })).toMatchObject({ valid: false, reason: 'expired' });
  });

  it('Succeeds: 12 renewals, 13 order.paid, expiresAt moved each time, the same key and instance; cancel at period end ends it', async () => {
    const buyer = await subscribe('succeeds');
    const laptop = await license('activate', { key: buyer.key, instanceName: 'laptop' });
    let current = await json(await merchant('GET', `/subscriptions/${buyer.subscriptionId}`), 200);
    const renewalOrders: string[] = [];
    let expiresAt = (await license('validate', { key: buyer.key })).license.expiresAt;
    for (let month = 0; month < 12; month++) {
      const result = await advance(buyer.subscriptionId, Date.parse(current.currentPeriodEnd) + HOUR);
      expect(result.orders).toHaveLength(1);
      expect(result.orders[0]).toMatchObject({ billingReason: 'subscription_cycle', status: 'completed', price: 9 });
      expect(result.events.filter((type: string) => type === 'order.paid')).toHaveLength(1);
      renewalOrders.push(result.orders[0].id);
      current = result.subscription;
      expect(current.status).toBe('active');
      const validated = await license('validate', { key: buyer.key, instanceId: laptop.instance.id });
      expect(validated).toMatchObject({ valid: true, instance: { id: laptop.instance.id } });
      expect(validated.license.id).toBe(laptop.license.id);
      expect(validated.license.expiresAt).toBe(current.currentPeriodEnd);
      expect(validated.license.expiresAt > expiresAt).toBe(true);
      expiresAt = validated.license.expiresAt;
    }
    expect(new Set(renewalOrders).size).toBe(12);
    // 13 order.paid: the trial's checkout (0.00) and the 12 renewals, each once.
    const paidEvents: Array<{ data: { order: { id: string; subscriptionId: string | null } } }> = [];
    let cursor: string | null = null;
    do {
      const page = await json(
        await merchant(
          'GET',
          `/events?type=order.paid&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        ),
        200,
      );
      paidEvents.push(...page.events);
      cursor = page.nextCursor;
    } while (cursor);
    const mine = paidEvents.filter((event) => event.data.order.subscriptionId === buyer.subscriptionId);
    expect(mine).toHaveLength(13);
    expect(new Set(mine.map((event) => event.data.order.id)).size).toBe(13);

    const canceled = await json(await merchant('POST', `/subscriptions/${buyer.subscriptionId}/cancel`, {}), 200);
    expect(canceled).toMatchObject({ status: 'active', cancelAtPeriodEnd: true });
    const ended = await advance(buyer.subscriptionId, Date.parse(current.currentPeriodEnd) + HOUR);
    expect(ended.events).toEqual(['subscription.ended']);
    expect(ended.subscription).toMatchObject({ status: 'canceled', endedAt: current.currentPeriodEnd });
    expect(await license('validate', { key: buyer.key })).toMatchObject({ valid: false, reason: 'expired' });
  });

  it('refuses advance with a live key (403 test_key_required), backwards and beyond 2 years (400)', async () => {
    const buyer = await subscribe('succeeds');
    const clock = (await json(await merchant('GET', `/subscriptions/${buyer.subscriptionId}`), 200)).clockTime;
    const back = await merchant('POST', `/subscriptions/${buyer.subscriptionId}/advance`, {
      to: new Date(Date.parse(clock) - HOUR).toISOString(),
    });
    expect((await json(back, 400)).code).toBe('validation_failed');
    const far = await merchant('POST', `/subscriptions/${buyer.subscriptionId}/advance`, {
      to: new Date(Date.parse(clock) + 800 * DAY).toISOString(),
    });
    expect((await json(far, 400)).code).toBe('validation_failed');
    const live = (await createKeyFor(owner, { scopes: ['subscription:write'], storeIds: [store.id] })).key;
    const refused = await fetch(
      `${server.url}/api/merchant/v1/stores/${store.id}/subscriptions/${buyer.subscriptionId}/advance`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${live}`, 'content-type': 'application/json', 'x-forwarded-for': ip() },
        body: JSON.stringify({ to: new Date(Date.parse(clock) + DAY).toISOString() }),
      },
    );
    expect((await json(refused, 403)).code).toBe('test_key_required');
  });
});
