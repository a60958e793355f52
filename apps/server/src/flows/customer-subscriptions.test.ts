/**
 * The buyer's subscriptions in their customer area, against the real database without HTTP: the
 * list of their own only (a seller's scheduled pause said in it), cancel at the period end
 * (twice: refused, saying it is scheduled), resume, a new card for the renewals (refused once
 * ended), and paying a past-due renewal by the page's link, which is the mailed one (pressing it leaves that working). Another buyer's
 * subscription is 404 to every action and stays as it was. A Stripe subscription's new method: a
 * `setup` Checkout Session on its saved customer (against the local fake Stripe, through
 * stripe-node), saved when its signed completion arrives (once, whatever the replays), charged by
 * the next dunning retry; refused without a customer or once ended.
 */
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../test/support/env.js';
import { createStore } from '../../../../test/support/factories.js';
import {
  completedSessionEvent,
  startFakeStripe,
  type FakeCard,
  type FakeSession,
  type FakeStripe,
} from '../../../../test/support/fake-stripe.js';
import { serviceContext, testConfig } from '../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../db/orm.js';
import { ManualClock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { createLogger } from '../lib/logger.js';
import { createProduct } from '../modules/catalog/catalog.service.js';
import { CustomerSchema, type Customer } from '../modules/customers/customers.entities.js';
import { keptMail } from '../modules/mail/outbox.js';
import { orderForToken } from '../modules/orders/order-lookup.js';
import type { Order } from '../modules/orders/orders.entities.js';
import type { SavedMethodRefs, TestCard } from '../modules/payments/gateway.js';
import { SavedPaymentMethodSchema } from '../modules/payments/payments.entities.js';
import { savedMethodOfSubscription } from '../modules/payments/payments.service.js';
import { stripeGateway, verifyStripeNotification, withMethodSaved } from '../modules/payments/stripe-gateway.js';
import type { ServiceContext } from '../modules/request/context.js';
import type { Store } from '../modules/stores/stores.entities.js';
import { getSubscription, pauseSubscription } from '../modules/subscriptions/subscriptions.service.js';
import { advanceSubscription } from './advance-subscription.js';
import {
  cancelCustomerSubscription,
  listCustomerSubscriptions,
  openTestMethodPage,
  payPastDueUrl,
  paymentMethodUpdateUrl,
  resumeCustomerSubscription,
  saveMethodFromGateway,
  saveTestCardForSubscription,
} from './customer-subscriptions.js';
import { createOrder } from './place-order.js';
import { cancelSubscriptionNow, resumeSubscription } from './renew-subscription.js';
import { handleNotification } from './settle-payment.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 10 });
});
afterAll(() => orm?.close());

const T0 = Date.UTC(2027, 0, 15, 10, 0);
const DAY = 86_400_000;
const unique = () => randomBytes(6).toString('hex');
const buyer = { ip: '203.0.113.9', userAgent: 'test', country: 'DE', testMode: () => Promise.resolve(true) };
const at = (ms: number) => new Date(ms).toISOString();

async function appError(promise: Promise<unknown>, code: string): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).appCode).toBe(code);
  return error as AppError;
}

/** A signed-in buyer of the store in a mode, as the customer session gives it to the procedures. */
async function customerOf(storeId: string, email: string, livemode: boolean): Promise<Customer> {
  const em = orm.em.fork();
  await em.insert(CustomerSchema, {
    id: newId(),
    store: storeId,
    livemode,
    email,
    createdAt: new Date(T0),
    lastLoginAt: new Date(T0),
  });
  return em.findOneOrFail(CustomerSchema, { store: storeId, livemode, email }, { populate: ['store'] });
}

/**
 * A test subscription to a monthly plan at 9.00, paid on the test gateway's page with `card`, or
 * (`stripe`) paid at Stripe, which saved `stripe.method`; `env` configures the server (Stripe's key).
 */
async function subscribed(
  card: TestCard,
  options: { env?: Record<string, string>; stripe?: { method: SavedMethodRefs; providerRef: string } } = {},
) {
  const clock = new ManualClock(T0);
  const ctx: ServiceContext = { ...serviceContext(orm, clock, options.env), livemode: false };
  const store = await createStore(orm.em.fork());
  const product = await createProduct(ctx, {
    storeId: store.id,
    name: 'Editor Pro',
    deliveryMethods: ['deliveryInstructions'],
    deliveryInstructions: 'Sign in with your e-mail.',
    plans: [{ interval: 'month', intervalCount: 1, price: 9, trialDays: 0, active: true }],
  });
  const email = `buyer-${unique()}@example.test`;
  const { order } = await createOrder(
    ctx,
    { store: store.id, cart: [{ productId: product.id, quantity: 1 }], email },
    buyer,
  );
  const notification = {
    eventId: `page_${unique()}`,
    kind: 'paid' as const,
    orderId: order.id,
    amountMinor: 900,
    currency: 'USD',
    providerRef: options.stripe?.providerRef ?? `test:${unique()}`,
    savedMethod: options.stripe?.method ?? { gateway: 'test' as const, customerRef: null, methodRef: card },
  };
  const gateway = options.stripe ? 'stripe' : 'test';
  expect(await handleNotification(ctx, { gateway, notification, now: clock.now() })).toBe('settled');
  const subscriptionId = order.subscriptionId!;
  const input = { storeId: store.id, subscriptionId };
  const as = async (who: string, livemode = false) => ({
    ...ctx,
    em: orm.em.fork(),
    livemode: true,
    customer: await customerOf(store.id, who, livemode),
  });
  return { clock, ctx, store, order, input, email, subscriptionId, buyer: await as(email), as };
}

describe("the buyer's subscriptions", () => {
  it('lists only the signed-in buyer’s own, in the session’s mode, with the next charge and the orders', async () => {
    const sale = await subscribed('succeeds');
    const { subscriptions } = await listCustomerSubscriptions(sale.buyer);
    expect(subscriptions).toHaveLength(1);
    expect(subscriptions[0]).toMatchObject({
      id: sale.subscriptionId,
      livemode: false,
      productName: 'Editor Pro',
      interval: 'month',
      intervalCount: 1,
      amount: 9,
      currency: 'USD',
      status: 'active',
      cancelAtPeriodEnd: false,
      endsAt: null,
      nextChargeAt: at(Date.UTC(2027, 1, 15, 10, 0)),
    });
    expect(subscriptions[0]!.orders).toEqual([
      expect.objectContaining({
        id: sale.order.id,
        billingReason: 'subscription_create',
        status: 'completed',
        price: 9,
      }),
    ]);
    // Another buyer of the store, and the same address signed in to the live area, see none of it.
    expect((await listCustomerSubscriptions(await sale.as(`other-${unique()}@example.test`))).subscriptions).toEqual(
      [],
    );
    expect((await listCustomerSubscriptions(await sale.as(sale.email, true))).subscriptions).toEqual([]);
  });

  it('another buyer’s subscription is 404 to every action, and nothing changes', async () => {
    const sale = await subscribed('succeeds');
    const before = await getSubscription({ ...sale.ctx, em: orm.em.fork() }, sale.input);
    const stranger = await sale.as(`stranger-${unique()}@example.test`);
    const id = { subscriptionId: sale.subscriptionId };
    await appError(cancelCustomerSubscription(stranger, id), 'not_found');
    await appError(resumeCustomerSubscription(stranger, id), 'not_found');
    await appError(paymentMethodUpdateUrl(stranger, id), 'not_found');
    await appError(payPastDueUrl(stranger, id), 'not_found');
    // The same buyer's address in the live area does not reach a test subscription either.
    await appError(cancelCustomerSubscription(await sale.as(sale.email, true), id), 'not_found');
    expect(await getSubscription({ ...sale.ctx, em: orm.em.fork() }, sale.input)).toEqual(before);
  });

  it('cancels at the period end with the buyer’s reason; a second cancel says it is scheduled; resume undoes it', async () => {
    const sale = await subscribed('succeeds');
    const id = { subscriptionId: sale.subscriptionId };
    const canceled = await cancelCustomerSubscription(sale.buyer, { ...id, comment: 'Too expensive for me.' });
    expect(canceled).toMatchObject({
      status: 'active',
      cancelAtPeriodEnd: true,
      endsAt: at(Date.UTC(2027, 1, 15, 10, 0)),
      nextChargeAt: null,
    });
    expect(await getSubscription({ ...sale.ctx, em: orm.em.fork() }, sale.input)).toMatchObject({
      cancellationReason: 'requested_by_customer',
      cancellationComment: 'Too expensive for me.',
    });

    const twice = await appError(cancelCustomerSubscription(sale.buyer, id), 'invalid_transition');
    expect(twice.message).toBe('This subscription is active and already set to cancel at the period end.');

    const resumed = await resumeCustomerSubscription(sale.buyer, id);
    expect(resumed).toMatchObject({ status: 'active', cancelAtPeriodEnd: false, endsAt: null });
    expect(await getSubscription({ ...sale.ctx, em: orm.em.fork() }, sale.input)).toMatchObject({
      cancellationReason: null,
      cancellationComment: null,
    });
    const again = await appError(resumeCustomerSubscription(sale.buyer, id), 'invalid_transition');
    expect(again.message).toContain('not set to cancel');
  });

  it('a pause the seller scheduled: the buyer’s list says when it pauses and when it charges again', async () => {
    const sale = await subscribed('succeeds');
    const periodEnd = Date.UTC(2027, 1, 15, 10, 0);
    const resumesAt = periodEnd + 14 * DAY;
    await pauseSubscription(sale.ctx, { ...sale.input, resumesAt: at(resumesAt) });
    expect(await getSubscription(sale.ctx, sale.input)).toMatchObject({ status: 'active', pauseAtPeriodEnd: true });
    const [listed] = (await listCustomerSubscriptions(sale.buyer)).subscriptions;
    expect(listed).toMatchObject({
      status: 'active',
      pausesAt: at(periodEnd),
      nextChargeAt: at(resumesAt),
      endsAt: null,
    });
    // Undone by the seller: the list is back to the renewal at the period end.
    await resumeSubscription(sale.ctx, sale.input);
    const [resumed] = (await listCustomerSubscriptions(sale.buyer)).subscriptions;
    expect(resumed).toMatchObject({ pausesAt: null, nextChargeAt: at(periodEnd) });
  });

  it('a new card from the test gateway’s page pays the renewals; refused once the subscription has ended', async () => {
    const sale = await subscribed('declines_renewals');
    const id = { subscriptionId: sale.subscriptionId };
    const { url } = await paymentMethodUpdateUrl(sale.buyer, id);
    const link = new URL(url);
    expect(link.pathname).toBe(`/pay/test/method/${sale.subscriptionId}`);
    const token = link.searchParams.get('token')!;
    // The link opens this subscription's page only, and not with a forged token.
    // Its last character changed (to another one: a token that ends in 0 already must still be forged).
    const forged = `${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`;
    await appError(openTestMethodPage(sale.ctx, sale.subscriptionId, forged), 'not_found');
    const other = await subscribed('succeeds');
    await appError(openTestMethodPage(sale.ctx, other.subscriptionId, token), 'not_found');
    const { subscription } = await openTestMethodPage(sale.ctx, sale.subscriptionId, token);
    await saveTestCardForSubscription(sale.ctx, subscription, 'succeeds');
    expect((await savedMethodOfSubscription(sale.ctx, sale.subscriptionId))?.methodRef).toBe('succeeds');

    // The renewal charges the new card, not the one that declines renewals.
    const renewed = await advanceSubscription(sale.ctx, { ...sale.input, to: at(Date.UTC(2027, 1, 16)) });
    expect(renewed.subscription.status).toBe('active');
    expect(renewed.orders.map((o) => o.status)).toEqual(['completed']);
    expect((await listCustomerSubscriptions(sale.buyer)).subscriptions[0]!.orders).toHaveLength(2);

    await cancelSubscriptionNow(sale.ctx, { ...sale.input, atPeriodEnd: false });
    const refused = await appError(paymentMethodUpdateUrl(sale.buyer, id), 'invalid_transition');
    expect(refused.message).toContain('canceled');
    await appError(openTestMethodPage(sale.ctx, sale.subscriptionId, token), 'invalid_transition');
  });

  it('Pay now: a past-due renewal’s checkout by the mailed link, which stays valid; paid there, active again', async () => {
    const sale = await subscribed('declines_renewals');
    const id = { subscriptionId: sale.subscriptionId };
    await appError(payPastDueUrl(sale.buyer, id), 'invalid_transition');
    const renewal = Date.UTC(2027, 1, 15, 10, 0);
    await advanceSubscription(sale.ctx, { ...sale.input, to: at(renewal + DAY / 2) });
    const [listed] = (await listCustomerSubscriptions(sale.buyer)).subscriptions;
    expect(listed).toMatchObject({ status: 'past_due', nextChargeAt: at(renewal + DAY) });
    const unpaid = listed!.orders.find((o) => o.billingReason === 'subscription_cycle')!;
    expect(unpaid.status).toBe('pending');
    // The e-mailed payment_failed link opens the same order's checkout, where the buyer can pay.
    const mail = await keptMail({ ...sale.ctx, em: orm.em.fork() }, { to: sale.email });
    const mailed = new URL(
      /http\S+\/checkout\/\S+/.exec(mail.find((m) => m.subject.startsWith('Payment failed'))!.text)![0],
    );
    expect(mailed.pathname).toBe(`/checkout/${unpaid.id}`);
    const opens = (token: string) => orderForToken({ ...sale.ctx, em: orm.em.fork() }, unpaid.id, token);
    expect((await opens(mailed.searchParams.get('token')!)).status).toBe('pending');

    // Pay now, twice: each link opens the checkout, and the mailed link still does (issue 40).
    const first = new URL((await payPastDueUrl(sale.buyer, id)).url);
    const second = new URL((await payPastDueUrl(sale.buyer, id)).url);
    expect(first.pathname).toBe(`/checkout/${unpaid.id}`);
    for (const link of [first, second, mailed])
      expect((await opens(link.searchParams.get('token')!)).id).toBe(unpaid.id);
    // The link opens that order only: not another of the buyer's orders, and a wrong token opens nothing.
    await appError(
      orderForToken({ ...sale.ctx, em: orm.em.fork() }, sale.order.id, mailed.searchParams.get('token')!),
      'store_forbidden',
    );
    await appError(opens('0'.repeat(64)), 'store_forbidden');
    const paid = {
      eventId: `page_${unique()}`,
      kind: 'paid' as const,
      orderId: unpaid.id,
      amountMinor: 900,
      currency: 'USD',
      providerRef: `test:${unique()}`,
      savedMethod: { gateway: 'test' as const, customerRef: null, methodRef: 'succeeds' },
    };
    expect(await handleNotification(sale.ctx, { gateway: 'test', notification: paid, now: sale.clock.now() })).toBe(
      'settled',
    );
    const [after] = (await listCustomerSubscriptions(sale.buyer)).subscriptions;
    expect(after).toMatchObject({ status: 'active', nextChargeAt: at(Date.UTC(2027, 2, 15, 10, 0)) });
    await appError(payPastDueUrl(sale.buyer, id), 'invalid_transition');
  });
});

describe('a new payment method at Stripe (a Checkout Session in setup mode)', () => {
  const SECRET_KEY = 'sk_test_fake_method_update';
  const WEBHOOK_SECRET = 'whsec_test_method_update';
  let fake: FakeStripe;
  let env: Record<string, string>;
  beforeAll(async () => {
    fake = await startFakeStripe();
    env = {
      PUBLIC_URL: 'https://shop-api.example.test',
      STRIPE_SECRET_KEY: SECRET_KEY,
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_BASE: fake.url,
    };
  });
  afterAll(() => fake?.close());

  /** A Stripe subscription whose first checkout saved a customer and a PaymentMethod that charges as `card`. */
  async function stripeSubscription(card: FakeCard) {
    const config = testConfig(env);
    const order = { id: newId(), number: 1, priceMinor: 900, currency: 'USD', customerEmail: 'b@example.test' };
    const { redirectUrl } = await stripeGateway.start(
      { ...order, createdAt: new Date() } as unknown as Order,
      { name: 'Editor shop' } as Store,
      { config, log: createLogger('silent'), now: new Date() },
      { saveMethod: true },
    );
    const session = [...fake.sessions.values()].find((s) => s.url === redirectUrl)!;
    const methodRef = fake.paymentIntents.get(session.payment_intent)!.payment_method!;
    fake.cards.set(methodRef, card);
    const method: SavedMethodRefs = { gateway: 'stripe', customerRef: session.customer, methodRef };
    return subscribed('succeeds', { env, stripe: { method, providerRef: session.payment_intent } });
  }

  /** Stripe's signed checkout.session.completed of a completed `setup` session, as its webhook sends it. */
  function completedSetup(session: FakeSession) {
    const payload = JSON.stringify(completedSessionEvent(session));
    return { payload, header: Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET }) };
  }

  /** The webhook route's work without HTTP: verify, read the SetupIntent, save. */
  async function deliver(ctx: ServiceContext, event: { payload: string; header: string }) {
    const verified = verifyStripeNotification(ctx.deps.config, Buffer.from(event.payload), event.header, new Date());
    if (verified?.kind !== 'method_saved') throw new Error(`not a method update: ${JSON.stringify(verified)}`);
    const notification = await withMethodSaved(ctx.deps.config, verified, ctx.log);
    return saveMethodFromGateway(ctx, { gateway: 'stripe', notification: notification!, now: new Date() });
  }

  const pageSaved = (subscriptionId: string) =>
    orm.em.fork().find(SavedPaymentMethodSchema, { subscriptionId }, { orderBy: { createdAt: 'asc' } });

  it('sets the new method up on the saved customer; once saved, the past-due retry charges it, and a replay is harmless', async () => {
    const sale = await stripeSubscription('declines');
    const id = { subscriptionId: sale.subscriptionId };
    const first = await savedMethodOfSubscription(sale.ctx, sale.subscriptionId);
    // The first renewal declines: past due, its retry a day later.
    const renewal = Date.UTC(2027, 1, 15, 10, 0);
    await advanceSubscription(sale.ctx, { ...sale.input, to: at(renewal + DAY / 2) });
    const declined = fake.charges.at(-1)!;
    expect(declined).toMatchObject({ customer: first!.customerRef, payment_method: first!.methodRef });
    expect((await listCustomerSubscriptions(sale.buyer)).subscriptions[0]).toMatchObject({ status: 'past_due' });

    const before = fake.requests.length;
    const { url } = await paymentMethodUpdateUrl(sale.buyer, id);
    expect(url).toMatch(/^https:\/\/checkout\.stripe\.test\//);
    const sent = fake.requests.slice(before);
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/checkout/sessions']);
    const account = `https://shop-api.example.test/account/${sale.store.subdomain}?mode=test`;
    expect(sent[0]!.form).toEqual({
      mode: 'setup',
      currency: 'usd',
      customer: first!.customerRef,
      client_reference_id: sale.subscriptionId,
      'metadata[subscriptionId]': sale.subscriptionId,
      'metadata[methodUpdate]': '1',
      'setup_intent_data[metadata][subscriptionId]': sale.subscriptionId,
      'setup_intent_data[metadata][methodUpdate]': '1',
      success_url: `${account}&done=payment-method`,
      cancel_url: account,
    });
    const session = [...fake.sessions.values()].find((s) => s.url === url)!;
    const newMethod = fake.setupIntents.get(session.setup_intent!)!.payment_method;
    expect(newMethod).not.toBe(first!.methodRef);
    // Nothing is saved until Stripe says the buyer completed the page.
    expect(await pageSaved(sale.subscriptionId)).toEqual([]);

    const event = completedSetup(session);
    expect(await deliver(sale.ctx, event)).toBe('method_saved');
    expect(
      fake.requests.some((r) => r.method === 'GET' && r.path === `/v1/setup_intents/${session.setup_intent}`),
    ).toBe(true);
    expect(await savedMethodOfSubscription(sale.ctx, sale.subscriptionId)).toMatchObject({
      gateway: 'stripe',
      customerRef: first!.customerRef,
      methodRef: newMethod,
      livemode: false,
    });
    // The same event again changes nothing.
    expect(await deliver(sale.ctx, event)).toBe('duplicate');
    expect(await pageSaved(sale.subscriptionId)).toHaveLength(1);
    // As on the test card page, nothing is charged at once: the retry is the engine's, at its time.
    expect(fake.charges.at(-1)).toBe(declined);

    const retried = await advanceSubscription(sale.ctx, { ...sale.input, to: at(renewal + DAY + DAY / 2) });
    expect(retried.subscription.status).toBe('active');
    expect(fake.charges.at(-1)).toMatchObject({
      status: 'succeeded',
      amount: 900,
      customer: first!.customerRef,
      payment_method: newMethod,
    });
  });

  it('refuses a subscription without a saved Stripe customer, and an ended one; a late completion saves nothing', async () => {
    const sale = await stripeSubscription('succeeds');
    const id = { subscriptionId: sale.subscriptionId };
    const { url } = await paymentMethodUpdateUrl(sale.buyer, id);
    const session = [...fake.sessions.values()].find((s) => s.url === url)!;
    await cancelSubscriptionNow(sale.ctx, { ...sale.input, atPeriodEnd: false });
    expect((await appError(paymentMethodUpdateUrl(sale.buyer, id), 'invalid_transition')).message).toContain(
      'canceled',
    );
    expect(await deliver(sale.ctx, completedSetup(session))).toBe('not_charging');
    expect(await pageSaved(sale.subscriptionId)).toEqual([]);

    const bare = await subscribed('succeeds', {
      env,
      stripe: {
        method: { gateway: 'stripe', customerRef: null, methodRef: 'pm_test_nocustomer' },
        providerRef: 'pi_x',
      },
    });
    const other = await stripeSubscription('succeeds');
    const stranger = await other.as(`stranger-${unique()}@example.test`);
    const before = fake.requests.length;
    await appError(paymentMethodUpdateUrl(bare.buyer, { subscriptionId: bare.subscriptionId }), 'invalid_transition');
    // Another buyer's Stripe subscription in the same store is 404.
    await appError(paymentMethodUpdateUrl(stranger, { subscriptionId: other.subscriptionId }), 'not_found');
    // Neither asked Stripe for anything.
    expect(fake.requests.length).toBe(before);
  });
});
