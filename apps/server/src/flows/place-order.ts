/**
 * Placing an order, shared by `/api/v1/checkout`, `/api/embed/checkout` and `/api/orders/create`:
 * the selling store (stores), the cart (catalog: prices and discounts from the database only,
 * stock checked), coupons, the blacklist, custom-field answers checked against the products'
 * fields, the order and its lines written in one statement with `order.created` (orders), the
 * checkout token stored hashed, and the idempotent result. Then the buyer's checkout: the order's
 * session page and the start of its payment (`POST /api/checkout/start`). Test products are sold
 * only to a buyer whose `testMode` (access/test-mode.ts) lets them see the store's test mode.
 */
import type {
  TCartLine,
  TCheckoutOrder,
  TCheckoutSession,
  TCheckoutStartResult,
  TCustomField,
  TPaymentMethod,
} from '@svc/schemas';
import type { TTaxCategory, TTaxSettings, ZCheckoutBillingInput, ZCheckoutStartInput } from '@svc/schemas';
import type { z } from 'zod';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { AppError, invalidField } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { ordersCreated } from '../lib/metrics.js';
import { minorToAmount } from '../lib/money.js';
import { iso } from '../lib/timestamps.js';
import { NO_TEST_MODE, type TestModeAccess } from '../modules/access/test-mode.js';
import { blacklistMatches } from '../modules/blacklist/blacklist.service.js';
import { normaliseCart, type NormalisedLine } from '../modules/catalog/cart.js';
import { ProductSchema, type Product } from '../modules/catalog/catalog.entities.js';
import { CouponSchema } from '../modules/coupons/coupons.entities.js';
import { claimCouponUse, requireCoupon } from '../modules/coupons/coupons.service.js';
import { afterEventWrite, type OutboxEvent } from '../modules/events/outbox.js';
import { recordIdempotentResult } from '../modules/idempotency/idempotency.service.js';
import { INITIAL_STATUS } from '../modules/orders/order-lifecycle.js';
import { lockOrder, orderForToken } from '../modules/orders/order-lookup.js';
import {
  toCheckoutOrder,
  toOrderDetail,
  type CheckoutOrderFields,
  type LinePlanFields,
} from '../modules/orders/order-views.js';
import { OrderLineSchema, type Order, type OrderLine } from '../modules/orders/orders.entities.js';
import { insertNewOrder } from '../modules/orders/orders.repo.js';
import { GATEWAYS, gatewayRefusal } from '../modules/payments/gateways.js';
import type { ServiceContext } from '../modules/request/context.js';
import { inTransaction } from '../modules/request/transaction.js';
import { findSellingStore, findSellingStoreRef, type SellingStoreRef } from '../modules/stores/selling-store.js';
import { chargesAhead } from '../modules/subscriptions/charges-ahead.js';
import { newSubscriptionRow } from '../modules/subscriptions/subscriptions.service.js';
import { storeSettings } from '../modules/stores/store-views.js';
import { lineTaxColumns, taxColumns, workOutTax, type TaxOutcome } from '../modules/tax/tax.js';
import { StoreSchema, type Store } from '../modules/stores/stores.entities.js';

export interface BuyerContext {
  ip: string;
  userAgent: string | undefined;
  country: string;
  /** Whether the buyer may see and buy the store's test products (the seller's side); no one when absent. */
  testMode?: TestModeAccess;
}

export interface CreateOrderRequest {
  store: string;
  cart: TCartLine[];
  email?: string | null | undefined;
  coupon?: string | undefined;
  customFields?: Record<string, string | number | boolean> | undefined;
  /** The buyer's billing details (the checkout's; docs/decisions.md, "#42 Tax"). */
  country?: string | undefined;
  taxId?: string | undefined;
  billingName?: string | undefined;
  billingAddress?: string | undefined;
}

/** Whether a coupon takes its part off this product's line (no products named: every line). */
function couponCovers(productIds: string[] | undefined, productId: string | null): boolean {
  return !!productIds && (productIds.length === 0 || (productId !== null && productIds.includes(productId)));
}

/**
 * The tax of these lines for this buyer: their billing country, else (nothing said yet) the
 * country of their IP as the evidence has it, which the checkout page asks them to confirm.
 */
function taxOf(
  settings: TTaxSettings,
  lines: Array<{ productId: string | null; amountMinor: number; category: TTaxCategory }>,
  coupon: { productIds: string[]; discountMinor: number } | undefined,
  billing: { country: string | null; taxId: string | null },
  ipCountry: string,
  at: Date,
): TaxOutcome {
  return workOutTax(
    settings,
    lines.map((line) => ({
      amountMinor: line.amountMinor,
      category: line.category,
      discounted: couponCovers(coupon?.productIds, line.productId),
    })),
    coupon?.discountMinor ?? 0,
    { country: billing.country ?? (ipCountry === 'XX' ? null : ipCountry), taxId: billing.taxId },
    at,
  );
}

export interface CreatedOrder {
  order: TCheckoutOrder;
  checkoutToken: string;
}

/** The cart as it will be sold, or a 4xx naming what stops it. Nothing is adjusted silently here. */
async function sellableLines(
  ctx: ServiceContext,
  store: SellingStoreRef,
  cart: TCartLine[],
  testMode: TestModeAccess,
): Promise<{ livemode: boolean; lines: NormalisedLine[] }> {
  if (cart.length === 0) throw new AppError('cart_empty', 'The cart is empty.');
  const normalised = await normaliseCart(ctx, store, cart, testMode);
  const refused = normalised.removed.find((r) => r.reason !== 'out_of_stock');
  if (refused) throw new AppError('product_unavailable', `Product ${refused.productId} cannot be bought.`);
  const sold = [
    ...normalised.removed.filter((r) => r.reason === 'out_of_stock'),
    ...normalised.adjusted.filter((a) => a.reason === 'stock'),
  ];
  if (sold.length > 0) throw new AppError('out_of_stock', 'Not enough keys in stock for this cart.');
  const bounds = normalised.adjusted.find((a) => a.reason !== 'stock');
  if (bounds) {
    const index = cart.findIndex((line) => line.productId === bounds.productId);
    throw invalidField(
      `cart.${index}.quantity`,
      bounds.reason === 'min_quantity' ? `At least ${bounds.quantity}.` : `At most ${bounds.quantity}.`,
    );
  }
  if (normalised.lines.length === 0) throw new AppError('cart_empty', 'The cart is empty.');
  return { livemode: normalised.livemode, lines: normalised.lines };
}

/** What an order line records of a cart line's plan (all null for a one-time product). */
function linePlanFields(line: NormalisedLine): LinePlanFields {
  return {
    planId: line.plan?.id ?? null,
    planInterval: line.plan?.interval ?? null,
    planIntervalCount: line.plan?.intervalCount ?? null,
    planTrialDays: line.plan?.trialDays ?? null,
  };
}

/** Every required field has a stored answer (a required checkbox: ticked); else 400 naming the first that lacks one. */
function requireAnswers(fields: TCustomField[], responses: Array<{ name: string; value: string }>): void {
  for (const field of fields) {
    if (!field.required) continue;
    const value = responses.find((response) => response.name === field.name)?.value ?? '';
    if (value.trim() === '' || (field.type === 'checkbox' && value !== 'true'))
      throw invalidField(`customFields.${field.name}`, 'Required.');
  }
}

/** The products of these ids in this order (an id whose product is gone is skipped). */
async function productsInOrder(ctx: ServiceContext, productIds: Array<string | null>): Promise<Product[]> {
  const ids = productIds.filter((id): id is string => !!id);
  const products = ids.length ? await ctx.em.find(ProductSchema, { id: { $in: ids } }) : [];
  return ids.map((id) => products.find((p) => p.id === id)).filter((p): p is Product => !!p);
}

/** The products' fields in cart order, one per name (required when any product requires it). */
function fieldsOf(products: Array<Pick<Product, 'customFields'>>): TCustomField[] {
  const fields = new Map<string, TCustomField>();
  for (const product of products) {
    for (const field of product.customFields) {
      const seen = fields.get(field.name);
      fields.set(field.name, seen ? { ...seen, required: seen.required || field.required } : field);
    }
  }
  return [...fields.values()];
}

/**
 * The answers checked against the fields. `deferRequired`: a missing required answer is
 * allowed (an order created without any answers; the checkout page asks for them and
 * checkout/start insists, see requireAnswers).
 */
export function customFieldResponses(
  fields: TCustomField[],
  answers: Record<string, string | number | boolean>,
  deferRequired = false,
): Array<{ name: string; value: string }> {
  for (const name of Object.keys(answers)) {
    if (!fields.some((field) => field.name === name))
      throw invalidField(`customFields.${name}`, 'Not a field of these products.');
  }
  const responses: Array<{ name: string; value: string }> = [];
  for (const field of fields) {
    const answer = answers[field.name];
    const blank = answer === undefined || (typeof answer === 'string' && answer.trim() === '');
    if (blank) {
      if (field.required && !deferRequired) throw invalidField(`customFields.${field.name}`, 'Required.');
      continue;
    }
    let value: string;
    switch (field.type) {
      case 'checkbox':
        if (typeof answer !== 'boolean') throw invalidField(`customFields.${field.name}`, 'Expected true or false.');
        if (field.required && !answer) throw invalidField(`customFields.${field.name}`, 'Required.');
        value = String(answer);
        break;
      case 'number': {
        const number =
          typeof answer === 'number'
            ? answer
            : typeof answer === 'string' && /^-?\d+(\.\d+)?$/.test(answer.trim())
              ? Number(answer)
              : NaN;
        if (!Number.isFinite(number)) throw invalidField(`customFields.${field.name}`, 'Expected a number.');
        value = String(number);
        break;
      }
      case 'email':
        if (typeof answer !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(answer.trim()))
          throw invalidField(`customFields.${field.name}`, 'Expected an e-mail address.');
        value = answer.trim();
        break;
      default:
        if (typeof answer !== 'string') throw invalidField(`customFields.${field.name}`, 'Expected text.');
        value = answer.trim();
    }
    responses.push({ name: field.name, value });
  }
  return responses;
}

/**
 * Places the order. A retry with the Idempotency-Key of an order already placed gets that order
 * back with nothing done. Transaction: the insert is one statement (the order, its lines and its
 * event); with a coupon or an Idempotency-Key, one transaction holds it with the coupon's use and
 * the recorded result (joined when the context holds one).
 */
export async function createOrder(
  ctx: ServiceContext,
  request: CreateOrderRequest,
  buyer: BuyerContext,
): Promise<CreatedOrder> {
  // A retry with the Idempotency-Key of an order already created: that order, and nothing done.
  if (ctx.idempotency?.mode === 'replay') return ctx.idempotency.result as CreatedOrder;
  const store = await findSellingStoreRef(ctx, request.store);
  const email = request.email ?? undefined;
  // The order is of its products' mode (test mode: docs/architecture.md), and so are the blacklist and coupon it meets.
  // Test products only for a buyer who may see the store's test mode: to anyone else they are unknown.
  const { livemode, lines } = await sellableLines(ctx, store, request.cart, buyer.testMode ?? NO_TEST_MODE);
  if ((await blacklistMatches(ctx, store.id, livemode, { email, ip: buyer.ip, country: buyer.country })).length > 0) {
    throw new AppError('blacklisted', 'This store does not accept orders from you.');
  }
  // Without any answers (a theme that leaves them to the checkout page), required ones wait for checkout/start.
  const responses = customFieldResponses(
    fieldsOf(lines.map((line) => line.product)),
    request.customFields ?? {},
    request.customFields === undefined,
  );
  const now = ctx.clock.now();
  // A recurring line is alone in its cart (recurring_alone); with a trial its first payment is 0
  // and the first charge falls at the trial's end (docs/decisions.md, #39 Subscriptions at checkout).
  const recurring = lines.find((line) => line.plan)?.plan ? lines[0]! : undefined;
  const inTrial = !!recurring?.plan && recurring.plan.trialDays > 0;
  const fullPriced = lines.map((line) => ({
    productId: line.product.id,
    quantity: line.quantity,
    unitPriceMinor: line.unitPriceMinor,
  }));
  const priced = inTrial ? fullPriced.map((line) => ({ ...line, unitPriceMinor: 0 })) : fullPriced;
  const subtotalMinor = priced.reduce((sum, line) => sum + line.unitPriceMinor * line.quantity, 0);
  const coupon = request.coupon ? await requireCoupon(ctx, store, livemode, request.coupon, priced, now) : undefined;
  const discountMinor = coupon?.discountMinor ?? 0;
  // A `forever` coupon takes its part off every payment: worked out on the plan's full price.
  const foreverDiscountMinor =
    recurring && coupon?.coupon.duration === 'forever'
      ? inTrial
        ? (await requireCoupon(ctx, store, livemode, request.coupon!, fullPriced, now)).discountMinor
        : discountMinor
      : 0;
  const checkoutToken = randomToken(32);
  const tax = taxOf(
    store.tax,
    priced.map((line, index) => ({
      productId: line.productId,
      amountMinor: line.unitPriceMinor * line.quantity,
      category: lines[index]!.product.taxCategory,
    })),
    coupon && { productIds: coupon.coupon.productIds, discountMinor },
    { country: request.country ?? null, taxId: request.taxId ?? null },
    buyer.country,
    now,
  );

  const first = lines[0]!;
  const order: CheckoutOrderFields = {
    id: newId(),
    number: 0, // drawn by the insert below, which writes it into the event's payload too
    store: { id: store.id },
    livemode,
    status: INITIAL_STATUS,
    productName: lines.length > 1 ? `${first.product.name} +${lines.length - 1} more` : first.product.name,
    priceMinor: tax.totalMinor,
    subtotalMinor,
    discountMinor,
    ...taxColumns(tax),
    invoiceNumber: null,
    creditNoteNumber: null,
    couponCode: coupon?.coupon.code ?? null,
    paidMinor: 0,
    currency: store.currency,
    paymentMethod: '',
    customerEmail: email ?? '',
    country: buyer.country,
    keyCount: 0,
    // A recurring line's order is its subscription's first payment; the subscription is written with it.
    subscriptionId: recurring ? newId() : null,
    billingReason: lines.some((line) => line.plan) ? 'subscription_create' : 'purchase',
    note: '',
    customFieldResponses: responses,
    createdAt: now,
    completedAt: null,
    updatedAt: now,
  };
  const lineViews = lines.map((line, index) => ({
    productId: line.product.id,
    productName: line.product.name,
    quantity: line.quantity,
    unitPriceMinor: inTrial ? 0 : line.unitPriceMinor,
    ...linePlanFields(line),
    taxCategory: line.product.taxCategory,
    ...lineTaxColumns(tax.lines[index]!),
  }));
  const created = (): CreatedOrder => ({
    order: toCheckoutOrder(order, lineViews, ctx.deps.config.checkoutLifetimeMs),
    checkoutToken,
  });
  const insert = async (tx: ServiceContext) => {
    const event: OutboxEvent = {
      storeId: store.id,
      livemode,
      type: 'order.created',
      payload: { order: toOrderDetail(order) },
      at: now,
    };
    order.number = await insertNewOrder(
      tx.em,
      {
        ...order,
        subscriptionId: order.subscriptionId ?? null,
        couponId: coupon?.coupon.id ?? null,
        couponCode: coupon?.coupon.code ?? null,
        buyerIp: buyer.ip,
        userAgent: buyer.userAgent?.slice(0, 512) ?? null,
        checkoutTokenHash: sha256Hex(checkoutToken),
        billingCountry: request.country ?? null,
        buyerTaxId: tax.taxId,
        billingName: request.billingName ?? null,
        billingAddress: request.billingAddress ?? null,
        lines: lineViews.map((line) => ({ id: newId(), ...line })),
      },
      event,
    );
    afterEventWrite(tx);
    if (recurring?.plan && order.subscriptionId) {
      newSubscriptionRow(
        tx,
        {
          id: order.subscriptionId,
          storeId: store.id,
          livemode,
          productId: recurring.product.id,
          productName: recurring.product.name,
          planId: recurring.plan.id,
          interval: recurring.plan.interval,
          intervalCount: recurring.plan.intervalCount,
          unitPriceMinor: recurring.unitPriceMinor,
          quantity: recurring.quantity,
          discountMinor: foreverDiscountMinor,
          couponId: foreverDiscountMinor > 0 ? coupon!.coupon.id : null,
          currency: store.currency,
          customerEmail: order.customerEmail,
          paymentMethod: '',
          firstOrderId: order.id,
        },
        now,
      );
      await tx.em.flush();
    }
    // With an Idempotency-Key: the answer's makings commit with the order, or neither does.
    await recordIdempotentResult(tx, created());
  };
  // The insert is one statement: a transaction of its own only when more must commit with it (the
  // coupon's use, the idempotent result), so a plain checkout stays at its statement budget.
  if (coupon || ctx.idempotency || recurring) {
    await inTransaction(ctx, async (tx) => {
      if (coupon) await claimCouponUse(tx, coupon.coupon.id);
      await insert(tx);
    });
  } else {
    await insert(ctx);
  }
  ordersCreated.inc();
  return created();
}

export function checkoutUrl(publicUrl: string, orderId: string, token: string): string {
  return `${publicUrl}/checkout/${orderId}?token=${encodeURIComponent(token)}`;
}

/** The order as its checkout page shows it. Transaction: none. */
export async function checkoutSummary(ctx: ServiceContext, order: Order): Promise<TCheckoutOrder> {
  const lines = await ctx.em.find(OrderLineSchema, { order: order.id }, { orderBy: { position: 'asc', id: 'asc' } });
  return toCheckoutOrder(
    order,
    lines.map((line) => ({
      productId: line.productId ?? null,
      productName: line.productName,
      quantity: line.quantity,
      unitPriceMinor: line.unitPriceMinor,
      planId: line.planId ?? null,
      planInterval: line.planInterval ?? null,
      planIntervalCount: line.planIntervalCount ?? null,
      planTrialDays: line.planTrialDays ?? null,
    })),
    ctx.deps.config.checkoutLifetimeMs,
  );
}

/** Whether this process takes an order of this mode with this method (payments/gateways.ts gatewayRefusal). */
export function gatewayAvailable(ctx: ServiceContext, method: TPaymentMethod, livemode: boolean): boolean {
  return gatewayRefusal(ctx.deps.config, method, livemode) === undefined;
}

/**
 * The methods an order may be paid with: the store's, and for a test order the test gateway
 * always, so a merchant can settle test orders without offering `test` to live buyers (a test
 * order takes neither `manual` nor a live Stripe key: gatewayRefusal).
 */
function offeredMethods(store: Store, livemode: boolean): TPaymentMethod[] {
  const methods = storeSettings(store).paymentMethods;
  return livemode || methods.includes('test') ? methods : ['test', ...methods];
}

/**
 * The order with what its checkout page asks for: the store, its payment methods here, the
 * products' custom fields. Transaction: none.
 */
export async function checkoutSession(ctx: ServiceContext, order: Order): Promise<TCheckoutSession> {
  const summary = await checkoutSummary(ctx, order);
  const store = await ctx.em.findOneOrFail(StoreSchema, { id: order.store.id });
  const products = await productsInOrder(
    ctx,
    summary.lines.map((line) => line.productId),
  );
  const settings = storeSettings(store);
  const ahead = await chargesAhead(ctx, order, summary.lines[0]?.plan?.trialDays ?? 0);
  return {
    order: summary,
    store: { id: store.id, name: store.name, subdomain: store.subdomain },
    paymentMethods: offeredMethods(store, order.livemode).filter((method) =>
      gatewayAvailable(ctx, method, order.livemode),
    ),
    customFields: fieldsOf(products).map((field) => ({ name: field.name, type: field.type, required: field.required })),
    answers: order.customFieldResponses,
    receiptsEnabled: settings.receiptsEnabled,
    nextCharge: ahead
      ? {
          amount: minorToAmount(ahead.nextMinor, order.currency),
          date: iso(ahead.nextAt),
          interval: ahead.interval,
          intervalCount: ahead.intervalCount,
        }
      : null,
  };
}

/** What the buyer may say of their billing at checkout (absent: unchanged; `taxId: null` removes it). */
interface BillingChange {
  country?: string | undefined;
  taxId?: string | null | undefined;
  billingName?: string | undefined;
  billingAddress?: string | undefined;
}

/**
 * A pending order's tax worked out again (its coupon or the buyer's billing details changed), on
 * its locked row: the price, the tax columns and each line's share. Only an order placed while the
 * store charged tax is taxed, under the store's settings now; a renewal's order keeps its terms.
 * Once tax is on, a billing country is required before paying (the IP's is only a guess).
 */
async function retaxPendingOrder(
  tx: ServiceContext,
  order: Order,
  lines: OrderLine[],
  store: Store,
  change: BillingChange,
  now: Date,
): Promise<void> {
  if (change.country !== undefined) order.billingCountry = change.country;
  if (change.taxId !== undefined) order.buyerTaxId = change.taxId;
  if (change.billingName !== undefined) order.billingName = change.billingName;
  if (change.billingAddress !== undefined) order.billingAddress = change.billingAddress;
  if (!order.taxBehavior || order.periodStart) return;
  const coupon = order.couponId ? await tx.em.findOne(CouponSchema, { id: order.couponId }) : null;
  const tax = taxOf(
    storeSettings(store).tax,
    lines.map((line) => ({
      productId: line.productId ?? null,
      amountMinor: line.unitPriceMinor * line.quantity,
      category: line.taxCategory,
    })),
    coupon ? { productIds: coupon.productIds, discountMinor: order.discountMinor } : undefined,
    { country: order.billingCountry ?? null, taxId: order.buyerTaxId ?? null },
    order.country,
    now,
  );
  // A store that turned its tax off meanwhile sells the pending order untaxed: the store's terms now.
  Object.assign(order, { priceMinor: tax.totalMinor, ...taxColumns(tax) });
  lines.forEach((line, index) => Object.assign(line, lineTaxColumns(tax.lines[index]!)));
}

/**
 * `POST /api/checkout/billing`: the buyer's billing country, VAT id, name and address on a pending
 * order opened with its token, its tax worked out again; answers the checkout session, so the page
 * shows the tax before the buyer pays. A VAT id of the wrong format is 400 naming `taxId`.
 * Transaction: one, holding the order's row lock.
 */
export async function updateCheckoutBilling(
  ctx: ServiceContext,
  input: z.infer<typeof ZCheckoutBillingInput>,
): Promise<TCheckoutSession> {
  const order = await inTransaction(ctx, async (tx) => {
    const order = await lockOrder(tx, (await orderForToken(tx, input.orderId, input.token)).id);
    const now = ctx.clock.now();
    if (order.status !== 'pending' || order.createdAt.getTime() + ctx.deps.config.checkoutLifetimeMs <= now.getTime()) {
      throw new AppError('order_not_pending', 'This order is no longer awaiting payment.');
    }
    const store = await findSellingStore(tx, order.store.id);
    const lines = await tx.em.find(OrderLineSchema, { order: order.id }, { orderBy: { position: 'asc', id: 'asc' } });
    await retaxPendingOrder(tx, order, lines, store, input, now);
    order.updatedAt = now;
    return order;
  });
  return checkoutSession(ctx, order);
}

/**
 * `POST /api/checkout/start`: the buyer picks a payment method (and may add an e-mail,
 * custom-field answers or a coupon) for a pending order opened with its token; the
 * gateway says where to go or what to do. Transaction: one, holding the order's row lock while
 * it changes (joined when the context holds one); the gateway's start runs after it commits.
 */
export async function startCheckout(
  ctx: ServiceContext,
  input: z.infer<typeof ZCheckoutStartInput>,
  buyer: BuyerContext,
): Promise<TCheckoutStartResult> {
  const gateway = GATEWAYS[input.paymentMethod];
  if (!gateway) throw invalidField('paymentMethod', 'This payment method is not available.');
  const { order, store } = await inTransaction(ctx, async (tx) => {
    const order = await lockOrder(tx, (await orderForToken(tx, input.orderId, input.token)).id);
    // Before anything is written: a method this process cannot take for the order's mode leaves the order as it was.
    const refusal = gatewayRefusal(ctx.deps.config, input.paymentMethod, order.livemode);
    if (refusal) throw invalidField('paymentMethod', refusal);
    const now = ctx.clock.now();
    // A renewal order's link stays good while it is pending (dunning decides, not the checkout lifetime).
    const lapsed =
      order.periodStart === null && order.createdAt.getTime() + ctx.deps.config.checkoutLifetimeMs <= now.getTime();
    if (order.status !== 'pending' || lapsed) {
      throw new AppError('order_not_pending', 'This order is no longer awaiting payment.');
    }
    const store = await findSellingStore(tx, order.store.id);
    if (!offeredMethods(store, order.livemode).includes(input.paymentMethod)) {
      throw invalidField('paymentMethod', 'This store does not offer this payment method.');
    }
    if (input.email) order.customerEmail = input.email;
    if (!order.customerEmail) throw invalidField('email', 'Required.');
    if (order.taxBehavior && !order.periodStart && !(input.country ?? order.billingCountry)) {
      throw invalidField('country', 'Required: the billing country decides the tax.');
    }
    if (
      (
        await blacklistMatches(tx, store.id, order.livemode, {
          email: order.customerEmail,
          ip: buyer.ip,
          country: buyer.country,
        })
      ).length > 0
    ) {
      throw new AppError('blacklisted', 'This store does not accept orders from you.');
    }
    const lines = await tx.em.find(OrderLineSchema, { order: order.id }, { orderBy: { position: 'asc', id: 'asc' } });
    const fields = fieldsOf(
      await productsInOrder(
        tx,
        lines.map((line) => line.productId ?? null),
      ),
    );
    if (input.customFields) order.customFieldResponses = customFieldResponses(fields, input.customFields);
    else requireAnswers(fields, order.customFieldResponses);
    // The coupon already applied, named again (a retry), changes nothing; another one is refused.
    const applied = input.coupon && order.couponId ? await tx.em.findOne(CouponSchema, { id: order.couponId }) : null;
    if (input.coupon && !(applied && applied.code.toLowerCase() === input.coupon.toLowerCase())) {
      if (order.couponId) throw new AppError('conflict', 'A coupon is already applied to this order.');
      const priced = lines.map((line) => ({
        productId: line.productId ?? '',
        quantity: line.quantity,
        unitPriceMinor: line.unitPriceMinor,
      }));
      const coupon = await requireCoupon(tx, store, order.livemode, input.coupon, priced, now);
      await claimCouponUse(tx, coupon.coupon.id);
      order.couponId = coupon.coupon.id;
      order.couponCode = coupon.coupon.code;
      order.discountMinor = coupon.discountMinor;
      order.priceMinor = order.subtotalMinor - coupon.discountMinor;
    }
    // The tax again: the coupon, or the billing details given now, may change it.
    await retaxPendingOrder(tx, order, lines, store, input, now);
    order.paymentMethod = input.paymentMethod;
    order.updatedAt = now;
    return { order, store };
  });
  // A subscription's first payment saves the method its renewals will charge.
  const next = await gateway.start(
    order,
    store,
    { config: ctx.deps.config, log: ctx.log, now: ctx.clock.now() },
    { saveMethod: order.subscriptionId !== null },
  );
  return {
    orderId: order.id,
    paymentMethod: input.paymentMethod,
    price: minorToAmount(order.priceMinor, order.currency),
    currency: order.currency,
    ...next,
  };
}
