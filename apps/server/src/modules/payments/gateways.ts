/**
 * The payment gateways by method, each behind one interface (gateway.ts): the manual and test
 * gateways here, Stripe in its own file. Inbound notifications and the other gateways join with
 * the payments capability. refundAtGateways gives an order's settled payments back at their
 * gateways when the seller refunds.
 */
import type { ServiceContext } from '../request/context.js';
import type { TPaymentMethod } from '@svc/schemas';
import type { Config } from '../../config.js';
import { AppError } from '../../lib/errors.js';
import { formatMoney, minorToAmount } from '../../lib/money.js';
import { can } from '../orders/order-lifecycle.js';
import type { Order } from '../orders/orders.entities.js';
import { publicOrderNumber } from '../orders/order-views.js';
import { storeSettings } from '../stores/store-views.js';
import { newId } from '../../lib/ids.js';
import type { ChargeResult, Gateway, GatewayContext, TestCard } from './gateway.js';
import { PaymentSchema } from './payments.entities.js';
import { methodUpdateToken } from './method-update-link.js';
import { claimTestCharge } from './payments.repo.js';
import { stripeGateway } from './stripe-gateway.js';
import { testGatewaySettles } from './test-gateway-rule.js';

/** Above a test order's manual payment instructions. */
export const TEST_ORDER_NOTICE = 'This is a test order: send no money. The seller confirms it in test mode.';

/**
 * The buyer pays as the seller instructs and the seller marks the order paid. A test order's
 * instructions say first that no money is to be sent: the seller confirms it in the dashboard's
 * test mode, and nothing moves (gatewayRefusal).
 */
export const manualGateway: Gateway = {
  method: 'manual',
  start(order, store) {
    const amount = formatMoney(order.priceMinor, order.currency);
    const custom = storeSettings(store).manualPaymentInstructions.trim();
    const reference = `Use ${publicOrderNumber(order.number)} as the payment reference.`;
    // A seller who wrote no instructions takes the payment their own way: say who tells the buyer how.
    const instructions = custom
      ? `${custom}\n\nAmount: ${amount}. ${reference}`
      : `Pay ${amount} to ${store.name}, who will send you their payment details. ${reference} Your order is delivered once ${store.name} confirms the payment.`;
    return { instructions: order.livemode ? instructions : `${TEST_ORDER_NOTICE}\n\n${instructions}` };
  },
};

/** A Stripe secret key of Stripe's test mode: it may take test orders. */
export const isStripeTestKey = (key: string | undefined): boolean => !!key && key.startsWith('sk_test_');

/**
 * Why this process cannot take an order of this mode with this method, or undefined. The mode
 * decides as much as the configuration (docs/architecture.md, Test mode: a test order is settled only by the test
 * gateway, and by Stripe when its configured key is a test key):
 * - `test`: testGatewaySettles;
 * - `stripe`: configured; a test order only with an `sk_test_…` key (a live key would charge a card);
 * - `manual`: both modes. It is no gateway: nothing is charged, and a test order is settled only
 *   by the seller's own confirmation in the dashboard's test mode (its instructions say to send
 *   no money: TEST_ORDER_NOTICE).
 */
export function gatewayRefusal(
  config: Pick<Config, 'isProduction' | 'testGatewaySecret' | 'stripeSecretKey'>,
  method: TPaymentMethod,
  livemode: boolean,
): string | undefined {
  if (!GATEWAYS[method]) return 'This payment method is not available.';
  if (method === 'test' && !testGatewaySettles(config, livemode))
    return config.isProduction
      ? 'The test gateway settles test orders only.'
      : 'The test gateway is not available here.';
  if (method === 'stripe' && !config.stripeSecretKey) return 'Stripe is not configured.';
  if (method === 'stripe' && !livemode && !isStripeTestKey(config.stripeSecretKey))
    return 'This is a test order: pay it with the test gateway (Stripe takes test orders only with a test key, sk_test_…).';
  return undefined;
}

/**
 * What a saved test card answers an off-session charge (docs/architecture.md, Test mode): `succeeds` pays;
 * `declines_renewals` (and `declines`, never saved by a paid checkout but a card all the same) is
 * declined with `card_declined`; `requires_authentication` needs the buyer.
 */
export function testCardCharge(card: string): { status: ChargeResult['status']; declineCode?: string } {
  switch (card as TestCard) {
    case 'succeeds':
      return { status: 'succeeded' };
    case 'requires_authentication':
      return { status: 'requires_action' };
    default:
      return { status: 'failed', declineCode: 'card_declined' };
  }
}

const chargeRefused = (message: string) => new AppError('gateway_error', message);

/** Pay on the pay page, or by sending a notification signed with TEST_GATEWAY_SECRET (see test-gateway.ts); testGatewaySettles says which orders. */
export const testGateway: Gateway = {
  method: 'test',
  start(order, _store, { config }) {
    const refusal = gatewayRefusal(config, 'test', order.livemode);
    if (refusal) {
      throw new AppError('validation_failed', 'The request is not valid.', {
        issues: [{ path: 'paymentMethod', message: refusal }],
      });
    }
    return {
      // The local pay page (http/test-pay.ts) settles through the same notification path.
      redirectUrl: `${config.publicUrl}/pay/test/${encodeURIComponent(order.id)}`,
      instructions: `Test payment: open the redirect, or POST a payment.succeeded notification for order ${order.id} of ${minorToAmount(order.priceMinor, order.currency)} ${order.currency} to ${config.publicUrl}/api/payments/test/webhook, signed with TEST_GATEWAY_SECRET.`,
    };
  },

  /**
   * The saved test card's behaviour (testCardCharge), recorded once per idempotency key in
   * test_gateway_charge: the same key answers the first attempt's row, whoever asks and however
   * many at once; the same key with another method or amount is refused as Stripe refuses it.
   */
  async chargeSaved(method, amountMinor, currency, idempotencyKey, ctx) {
    if (method.gateway !== 'test') throw chargeRefused('This payment method is not a test card.');
    if (!testGatewaySettles(ctx.deps.config, method.livemode))
      throw chargeRefused('The test gateway charges test payment methods only.');
    const answer = testCardCharge(method.methodRef);
    const row = await claimTestCharge(ctx.em, {
      id: newId(),
      idempotencyKey,
      methodId: method.id,
      livemode: method.livemode,
      amountMinor,
      currency,
      status: answer.status,
      declineCode: answer.declineCode ?? null,
      now: ctx.clock.now(),
    });
    if (row.method_id !== method.id || Number(row.amount_minor) !== amountMinor || row.currency !== currency)
      throw chargeRefused('This idempotency key was used with another payment method or amount.');
    const providerRef = `test:${row.id}`;
    if (row.status === 'succeeded') return { status: 'succeeded', providerRef };
    if (row.status === 'requires_action') return { status: 'requires_action', providerRef };
    return { status: 'failed', declineCode: row.decline_code ?? 'card_declined', providerRef };
  },

  /** The card page (http/test-pay.ts) opened by a signed, hour-long link: nothing is stored until a card is chosen. */
  startMethodUpdate(request, ctx) {
    const token = methodUpdateToken(ctx.deps.config, request.subscriptionId, ctx.clock.now());
    return Promise.resolve({
      redirectUrl: `${ctx.deps.config.publicUrl}/pay/test/method/${request.subscriptionId}?token=${encodeURIComponent(token)}`,
    });
  },
};

export const GATEWAYS: Partial<Record<TPaymentMethod, Gateway>> = {
  manual: manualGateway,
  test: testGateway,
  stripe: stripeGateway,
};

/** Payment id -> the gateway's id of the refund that gave it back. */
export type GatewayRefunds = ReadonlyMap<string, string>;

/**
 * The seller's refund, at the gateways first: each settled payment of a refundable order whose
 * gateway holds the money (Stripe) is refunded there (a zero one, a trial's, needs nothing), and their refund ids come back for
 * refundOrder to record. Nothing is written here and no row lock is held across the calls (an
 * HTTP call can take the client's timeout twice over); a refusal throws `gateway_error` with
 * the order, its keys and payments as they were. An order already refunded, or not paid, makes
 * no call (refundOrder answers it as before). Manual and test payments have no gateway refund.
 */
export async function refundAtGateways(ctx: ServiceContext, order: Order): Promise<GatewayRefunds> {
  const refunds = new Map<string, string>();
  if (!can(order.status, 'refund')) return refunds;
  const at: GatewayContext = { config: ctx.deps.config, log: ctx.log, now: ctx.clock.now() };
  const payments = await ctx.em.find(
    PaymentSchema,
    { order: order.id, status: 'paid' },
    { orderBy: { createdAt: 'asc' } },
  );
  for (const payment of payments) {
    // A zero payment (a trial's setup) holds no money at the gateway.
    if (payment.amountMinor === 0) continue;
    const gateway = GATEWAYS[payment.gateway as TPaymentMethod];
    if (gateway?.refund) refunds.set(payment.id, (await gateway.refund(payment, order, at)).refundRef);
  }
  return refunds;
}
