/**
 * The buyer's own subscriptions in the store's customer area (`/api/customer/subscriptions...`):
 * the list, cancel at the period end, undo that cancel, a new card for the renewals (the gateway's
 * own page, and the gateway's word that it was saved there), and paying a past-due renewal now
 * (its checkout, by the mailed pay link). A subscription is the buyer's when it is in the session's
 * store and mode and was bought with the session's e-mail; any other is 404, exactly as one that
 * does not exist, and nothing is changed.
 */
import type {
  TCustomerCancelSubscriptionInput,
  TCustomerSubscription,
  TCustomerSubscriptionIdInput,
  TCustomerSubscriptionLink,
  TCustomerSubscriptionList,
} from '@svc/schemas';
import { AppError } from '../lib/errors.js';
import { minorToAmount } from '../lib/money.js';
import { iso } from '../lib/timestamps.js';
import type { Customer } from '../modules/customers/customers.entities.js';
import { publicOrderNumber } from '../modules/orders/order-views.js';
import { OrderSchema } from '../modules/orders/orders.entities.js';
import { renewalPayToken } from '../modules/orders/renewal-pay-link.js';
import type { MethodSavedNotification, SavedMethodRefs } from '../modules/payments/gateway.js';
import { GATEWAYS } from '../modules/payments/gateways.js';
import { methodUpdateTokenValid } from '../modules/payments/method-update-link.js';
import {
  claimGatewayNotification,
  recordNotificationOutcome,
  savedMethodOfSubscription,
  saveMethodOfSubscription,
} from '../modules/payments/payments.service.js';
import { testGatewaySettles } from '../modules/payments/test-gateway-rule.js';
import type { ServiceContext } from '../modules/request/context.js';
import { inTransaction } from '../modules/request/transaction.js';
import type { Store } from '../modules/stores/stores.entities.js';
import { amountOf } from '../modules/subscriptions/subscription-machine.js';
import { stateOf } from '../modules/subscriptions/subscription-views.js';
import { SubscriptionSchema, type Subscription } from '../modules/subscriptions/subscriptions.entities.js';
import { findSubscription, refuseWhileCharging } from '../modules/subscriptions/subscriptions.service.js';
import { selectSubscriptionPage } from '../modules/subscriptions/subscriptions.repo.js';
import { checkoutUrl } from './place-order.js';
import { cancelSubscriptionNow, resumeSubscription } from './renew-subscription.js';

/** A buyer's page lists this many of their subscriptions, and this many orders of each. */
const MAX_SUBSCRIPTIONS = 50;
const MAX_ORDERS = 24;

type CustomerContext = ServiceContext & { customer: Customer };

/** The session's mode is the mode of everything the buyer sees. */
const inMode = (ctx: CustomerContext): ServiceContext => ({ ...ctx, livemode: ctx.customer.livemode });

const storeOf = (customer: Customer): Store => customer.store.getEntity();

/** The buyer's subscription (404 for anyone else's), locked when asked. */
async function ownSubscription(ctx: CustomerContext, subscriptionId: string, lock = false): Promise<Subscription> {
  const row = await findSubscription(inMode(ctx), { storeId: ctx.customer.store.id, subscriptionId }, lock);
  if (row.customerEmail !== ctx.customer.email) throw new AppError('not_found', 'No such subscription.');
  return row;
}

/**
 * When the next charge falls, as the buyer's page says it: none once it is set to end or has
 * ended; the end of a pause (scheduled or running) when it has one, since resuming charges.
 */
function nextChargeAt(row: Subscription): Date | null {
  switch (row.status) {
    case 'trialing':
    case 'active':
      if (row.pauseAtPeriodEnd) return row.resumesAt ?? null;
      return row.cancelAtPeriodEnd ? null : row.currentPeriodEnd;
    case 'past_due':
      return row.nextRetryAt ?? null;
    case 'paused':
      return row.resumesAt ?? null;
    default:
      return null;
  }
}

async function toCustomerSubscription(ctx: ServiceContext, row: Subscription): Promise<TCustomerSubscription> {
  const money = (minor: number) => minorToAmount(minor, row.currency);
  const orders = await ctx.em.find(
    OrderSchema,
    { subscriptionId: row.id },
    {
      orderBy: { number: 'desc' },
      limit: MAX_ORDERS,
      fields: ['id', 'number', 'status', 'billingReason', 'priceMinor', 'currency', 'createdAt'],
    },
  );
  const next = nextChargeAt(row);
  return {
    id: row.id,
    livemode: row.livemode,
    productName: row.productName,
    interval: row.interval,
    intervalCount: row.intervalCount,
    quantity: row.quantity,
    amount: money(amountOf(stateOf(row).terms)),
    currency: row.currency,
    status: row.status,
    paymentMethod: row.paymentMethod,
    currentPeriodEnd: iso(row.currentPeriodEnd),
    nextChargeAt: next ? iso(next) : null,
    trialEnd: row.trialEnd ? iso(row.trialEnd) : null,
    cancelAtPeriodEnd: row.cancelAtPeriodEnd,
    endsAt: row.cancelAtPeriodEnd ? iso(row.currentPeriodEnd) : null,
    pausesAt: row.pauseAtPeriodEnd ? iso(row.currentPeriodEnd) : null,
    endedAt: row.endedAt ? iso(row.endedAt) : null,
    pastDueAt: row.pastDueAt ? iso(row.pastDueAt) : null,
    orders: orders.map((order) => ({
      id: order.id,
      orderId: publicOrderNumber(order.number),
      status: order.status,
      billingReason: order.billingReason,
      price: minorToAmount(order.priceMinor, order.currency),
      currency: order.currency,
      createdAt: iso(order.createdAt),
    })),
    createdAt: iso(row.createdAt),
  };
}

/** The buyer's subscriptions in this store, newest first (the store, mode and e-mail index serves it). Transaction: none. */
export async function listCustomerSubscriptions(ctx: CustomerContext): Promise<TCustomerSubscriptionList> {
  const scoped = inMode(ctx);
  const ids = await selectSubscriptionPage(
    scoped.em,
    { storeId: ctx.customer.store.id, livemode: ctx.customer.livemode, customerEmail: ctx.customer.email },
    undefined,
    MAX_SUBSCRIPTIONS,
  );
  if (ids.length === 0) return { subscriptions: [] };
  const rows = await scoped.em.find(SubscriptionSchema, { id: { $in: ids.map((row) => row.id) } });
  const byId = new Map(rows.map((row) => [row.id, row]));
  const subscriptions: TCustomerSubscription[] = [];
  for (const { id } of ids) subscriptions.push(await toCustomerSubscription(scoped, byId.get(id)!));
  return { subscriptions };
}

async function answer(ctx: CustomerContext, subscriptionId: string): Promise<TCustomerSubscription> {
  return toCustomerSubscription(inMode(ctx), await ownSubscription(ctx, subscriptionId));
}

/**
 * Cancel at the period end, as the buyer asked (`requested_by_customer`), with their comment for the
 * seller. A second cancel is 409 `invalid_transition` ("already set to cancel at the period end");
 * a past-due or paused one has no paid period running, so it ends now (the machine's rule).
 * Transaction: one, holding the subscription's row lock.
 */
export async function cancelCustomerSubscription(
  ctx: CustomerContext,
  input: TCustomerCancelSubscriptionInput,
): Promise<TCustomerSubscription> {
  await inTransaction(inMode(ctx), async (tx) => {
    const row = await ownSubscription({ ...tx, customer: ctx.customer }, input.subscriptionId, true);
    await cancelSubscriptionNow(
      tx,
      { storeId: row.store.id, subscriptionId: row.id, atPeriodEnd: true },
      'requested_by_customer',
    );
    row.cancellationComment = input.comment ? input.comment : null;
    await tx.em.flush();
  });
  return answer(ctx, input.subscriptionId);
}

/**
 * Undo the buyer's scheduled cancel; anything else (a paused one, an ended one) is 409
 * `invalid_transition`. Transaction: resumeSubscription's one.
 */
export async function resumeCustomerSubscription(
  ctx: CustomerContext,
  input: TCustomerSubscriptionIdInput,
): Promise<TCustomerSubscription> {
  const row = await ownSubscription(ctx, input.subscriptionId);
  if (!row.cancelAtPeriodEnd)
    throw new AppError(
      'invalid_transition',
      row.status === 'canceled'
        ? 'This subscription has ended; it cannot be resumed.'
        : `This subscription is ${row.status.replace('_', ' ')} and not set to cancel: there is nothing to resume.`,
    );
  await resumeSubscription(inMode(ctx), { storeId: row.store.id, subscriptionId: row.id });
  return answer(ctx, input.subscriptionId);
}

/** Statuses whose renewals will still charge a card: a new one can be saved for them. */
const CHARGING = new Set<Subscription['status']>(['trialing', 'active', 'past_due', 'paused']);

const charging = (row: Subscription): boolean => CHARGING.has(row.status);

/** 409 for a subscription whose renewals charge nothing any more (ended, or never started). */
function refuseUnlessCharging(row: Subscription): void {
  if (!charging(row))
    throw new AppError(
      'invalid_transition',
      `This subscription is ${row.status.replace(/_/g, ' ')}: there are no more charges to pay with a new card.`,
    );
}

/**
 * Where the buyer saves a new card for the renewals: the gateway's own page (startMethodUpdate:
 * the test gateway's card page; Stripe, a Checkout Session in `setup` mode on the saved customer),
 * which sends them back to their account page. When it is saved, renewals and dunning retries
 * charge it. Refused (409 `invalid_transition`) for a subscription that has ended or never
 * started, and for one paid by invoice. Transaction: none (the test link is signed; Stripe keeps
 * the session; nothing is stored here).
 */
export async function paymentMethodUpdateUrl(
  ctx: CustomerContext,
  input: TCustomerSubscriptionIdInput,
): Promise<TCustomerSubscriptionLink> {
  const row = await ownSubscription(ctx, input.subscriptionId);
  refuseUnlessCharging(row);
  const store = storeOf(ctx.customer);
  const gateway = GATEWAYS[row.paymentMethod as keyof typeof GATEWAYS];
  if (!gateway?.startMethodUpdate)
    throw new AppError(
      'invalid_transition',
      row.paymentMethod === 'manual'
        ? 'This subscription is paid by invoice: there is no card to update.'
        : `Payment methods of ${store.name} cannot be updated here; contact the store.`,
    );
  const scoped = inMode(ctx);
  const account = (outcome?: string) => `${ctx.deps.config.publicUrl}${accountPageUrl(store, row.livemode, outcome)}`;
  const { redirectUrl } = await gateway.startMethodUpdate(
    {
      subscriptionId: row.id,
      livemode: row.livemode,
      currency: row.currency,
      current: await savedMethodOfSubscription(scoped, row.id),
      doneUrl: account('payment-method'),
      cancelUrl: account(),
    },
    scoped,
  );
  if (!redirectUrl) throw new AppError('service_unavailable', 'The payment gateway gave no page; try again shortly.');
  return { url: redirectUrl };
}

/**
 * `Pay now` on a past-due subscription: the checkout of its unpaid renewal order, by the same link
 * the payment_failed mail gave (orders/renewal-pay-link.ts: derived from the order, nothing
 * stored), so pressing it leaves the mailed link working. Paid there, the subscription is active
 * again and the card used is saved for the renewals. Transaction: none (it only reads).
 */
export async function payPastDueUrl(
  ctx: CustomerContext,
  input: TCustomerSubscriptionIdInput,
): Promise<TCustomerSubscriptionLink> {
  const row = await ownSubscription(ctx, input.subscriptionId);
  refuseWhileCharging(ctx, row);
  if (row.status !== 'past_due' || !row.unpaidFrom)
    throw new AppError(
      'invalid_transition',
      `This subscription is ${row.status.replace(/_/g, ' ')}: there is no payment due.`,
    );
  const unpaid = await ctx.em.findOne(
    OrderSchema,
    { subscriptionId: row.id, periodStart: row.unpaidFrom, billingReason: 'subscription_cycle', status: 'pending' },
    { fields: ['id'] },
  );
  if (!unpaid) throw new AppError('invalid_transition', 'There is no unpaid renewal to pay; reload the page.');
  const { config } = ctx.deps;
  return { url: checkoutUrl(config.publicUrl, unpaid.id, renewalPayToken(config, unpaid.id)) };
}

/**
 * The test gateway's card page for a subscription (`/pay/test/method/{id}`), opened by the link
 * `paymentMethodUpdateUrl` made: the subscription and its store, or 404 for a wrong or expired link
 * (the same answer as an unknown subscription), 409 once it has ended. Transaction: none.
 */
export async function openTestMethodPage(
  ctx: ServiceContext,
  subscriptionId: string,
  token: string | undefined,
): Promise<{ subscription: Subscription; store: Store }> {
  const wrong = () =>
    new AppError('not_found', 'This link is wrong or has expired: start again from your account page.');
  if (!token || !methodUpdateTokenValid(ctx.deps.config, subscriptionId, token, ctx.clock.now())) throw wrong();
  const subscription = await ctx.em.findOne(SubscriptionSchema, { id: subscriptionId }, { populate: ['store'] });
  if (!subscription || subscription.paymentMethod !== 'test') throw wrong();
  if (!testGatewaySettles(ctx.deps.config, subscription.livemode))
    throw new AppError('validation_failed', 'The test gateway settles test orders only.');
  refuseUnlessCharging(subscription);
  return { subscription, store: subscription.store.getEntity() };
}

/**
 * A method the buyer saved on the gateway's page, for the subscription's renewals: they (and a
 * past-due one's next dunning retry) charge the newest one from now on. Nothing is charged here, on
 * any gateway: the retry is the engine's, at its time. Transaction: none (one insert).
 */
async function saveNewMethod(ctx: ServiceContext, subscription: Subscription, method: SavedMethodRefs): Promise<void> {
  await saveMethodOfSubscription(ctx, {
    storeId: subscription.store.id,
    livemode: subscription.livemode,
    subscriptionId: subscription.id,
    method,
    now: ctx.clock.now(),
  });
}

/** The test card chosen on that page, saved for the subscription's renewals. Transaction: none (one insert). */
export async function saveTestCardForSubscription(
  ctx: ServiceContext,
  subscription: Subscription,
  card: string,
): Promise<void> {
  await saveNewMethod(ctx, subscription, { gateway: 'test', customerRef: null, methodRef: card });
}

export type MethodSavedOutcome = 'method_saved' | 'duplicate' | 'unknown_subscription' | 'not_charging';

/**
 * A gateway's word that the buyer saved a new method on its page (Stripe's completed `setup`
 * session of startMethodUpdate): claimed once per (gateway, event id), then saved as the test card
 * page saves its card. A subscription of another gateway or unknown is only recorded, and so is one
 * that has ended meanwhile (the page would refuse it too). Transaction: one, in which the claim,
 * the saved method and the outcome commit together, so a replayed event changes nothing.
 */
export async function saveMethodFromGateway(
  ctx: ServiceContext,
  input: { gateway: string; notification: MethodSavedNotification; now: Date },
): Promise<MethodSavedOutcome> {
  const { gateway, notification, now } = input;
  return inTransaction(ctx, async (tx) => {
    const fresh = await claimGatewayNotification(tx, {
      gateway,
      eventId: notification.eventId,
      orderId: null,
      kind: notification.kind,
      receivedAt: now,
    });
    if (!fresh) return 'duplicate';
    const subscription = await tx.em.findOne(SubscriptionSchema, { id: notification.subscriptionId });
    let outcome: MethodSavedOutcome;
    if (!subscription || subscription.paymentMethod !== gateway || notification.savedMethod.gateway !== gateway)
      outcome = 'unknown_subscription';
    else if (!charging(subscription)) outcome = 'not_charging';
    else {
      await saveNewMethod(tx, subscription, notification.savedMethod);
      outcome = 'method_saved';
    }
    await recordNotificationOutcome(tx, { gateway, eventId: notification.eventId, outcome });
    return outcome;
  });
}

/** The buyer's account page of the subscription's store and mode, saying what just happened. Transaction: none. */
export function accountPageUrl(store: Store, livemode: boolean, outcome?: string): string {
  const query = new URLSearchParams();
  if (!livemode) query.set('mode', 'test');
  if (outcome) query.set('done', outcome);
  const text = query.toString();
  return `/account/${store.subdomain}${text ? `?${text}` : ''}`;
}
