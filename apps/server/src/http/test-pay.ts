/**
 * The `test` gateway's pay page: where `POST /api/checkout/start` with `test` redirects. In
 * production it is served for test orders, with or without TEST_GATEWAY_SECRET (the checkout
 * token opens the order), and a live order's page is a 400 with nothing settled; outside
 * production it is served for any order (testGatewaySettles: the secret is always there, config.ts).
 * It shows the amount, the four test cards (radio buttons, `Succeeds` checked) and a Pay button;
 * the button posts `card` and settles the order through the same notification path a signed test
 * notification takes (handleNotification), saving the card as the order's payment method, then
 * sends the buyer to the order page. `Declines` fails the payment instead (a `failed`
 * notification: the order stays pending) and comes back here saying so. Plain HTML and a form:
 * no script. The checkout token (form field, query or svc_checkout cookie) opens the order.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type PublicError } from '../lib/errors.js';
import { escapeHtml } from '../lib/html.js';
import { looksLikeId } from '../lib/ids.js';
import { formatMoney } from '../lib/money.js';
import { chargesText, type ChargesAhead } from '../modules/catalog/plan-text.js';
import { OrderLineSchema, type Order } from '../modules/orders/orders.entities.js';
import { chargesAhead } from '../modules/subscriptions/charges-ahead.js';
import { checkoutTokenFor } from '../modules/orders/checkout-cookie.js';
import { orderForToken } from '../modules/orders/order-lookup.js';
import { publicOrderNumber } from '../modules/orders/order-views.js';
import { handleNotification } from '../flows/settle-payment.js';
import { accountPageUrl, openTestMethodPage, saveTestCardForSubscription } from '../flows/customer-subscriptions.js';
import { TEST_CARDS, type TestCard } from '../modules/payments/gateway.js';
import { testGatewaySettles, testPayPageEnabled } from '../modules/payments/test-gateway-rule.js';
import { storeReturnUrl } from '../modules/stores/origins.js';
import { StoreSchema, type Store } from '../modules/stores/stores.entities.js';
import type { RoutePolicy } from '../trpc/policy.js';
import { pageBrand, sendPage } from './pages.js';
import { plainRoute, type PlainContext, type PlainRoute } from './plain-route.js';

const POLICY: RoutePolicy = {
  auth: { kind: 'buyer', staffSession: false },
  csrf: 'none',
  cors: 'none',
  errors: ['not_found', 'validation_failed'],
};

/** The checkout token: the form's field, the query, or the svc_checkout cookie naming this order. */
function tokenOf(ctx: PlainContext, body: Record<string, string> | undefined): string | undefined {
  return body?.token ?? ctx.query.token ?? checkoutTokenFor(ctx.caller.credentials.checkout, ctx.params.orderId!);
}

async function open(ctx: PlainContext, body: Record<string, string> | undefined) {
  const orderId = ctx.params.orderId!;
  if (!looksLikeId(orderId)) throw new AppError('not_found', 'There is no such order.');
  const token = tokenOf(ctx, body);
  if (!token) throw new AppError('unauthorized', 'Open this page from the checkout.');
  const order = await orderForToken(ctx, orderId, token);
  if (!testGatewaySettles(ctx.deps.config, order.livemode))
    throw new AppError('validation_failed', 'The test gateway settles test orders only.');
  const store = await ctx.em.findOneOrFail(StoreSchema, { id: order.store.id });
  return { order, store, token };
}

/** The test cards as the page names them (DESIGN: the radio buttons carry these labels). */
const CARD_LABELS: Record<TestCard, { label: string; hint: string }> = {
  succeeds: { label: 'Succeeds', hint: 'Pays now and every later charge.' },
  declines: { label: 'Declines', hint: 'The payment is declined.' },
  declines_renewals: { label: 'Declines renewals', hint: 'Pays now; every later charge is declined.' },
  requires_authentication: {
    label: 'Requires authentication',
    hint: 'Pays now; every later charge needs the buyer to confirm it.',
  },
};

/** The posted `card` (`succeeds` when none is posted: a form of an older page, a script). */
function cardOf(body: Record<string, string> | undefined): TestCard {
  const card = body?.card ?? 'succeeds';
  if (!(TEST_CARDS as readonly string[]).includes(card))
    throw new AppError('validation_failed', 'Choose one of the test cards.', {
      issues: [{ path: 'card', message: `One of: ${TEST_CARDS.join(', ')}.` }],
    });
  return card as TestCard;
}

const cardChoices = (cards: readonly TestCard[] = TEST_CARDS) =>
  `<fieldset class="methods">
<legend>Test card</legend>
${cards
  .map(
    (card, i) => `<div class="method">
<input type="radio" name="card" id="card-${card}" value="${card}" aria-describedby="card-${card}-hint"${i === 0 ? ' checked' : ''}>
<label for="card-${card}">${CARD_LABELS[card].label}</label>
<p class="hint" id="card-${card}-hint">${CARD_LABELS[card].hint}</p>
</div>`,
  )
  .join('\n')}
</fieldset>`;

/** The cards a saved card can be: every one but `Declines` (it is refused when saved, as a real card would be). */
const SAVABLE_CARDS = TEST_CARDS.filter((card) => card !== 'declines');

const payError = (reply: FastifyReply, error: PublicError, request: FastifyRequest) =>
  sendPage(
    reply,
    {
      title: 'Test payment',
      body: `<h1>Test payment</h1>\n<p role="alert">${escapeHtml(error.message)}</p>`,
      embed: isEmbedQuery(request),
    },
    error.status,
  );

const isEmbedQuery = (request: FastifyRequest) => (request.query as { embed?: string }).embed === '1';

/**
 * What the next page's address carries on: `embed=1` in a frame, and the theme's address to go back
 * to when it is on one of the store's origins (pages.ts checks it again there).
 */
function carried(ctx: PlainContext, store: Store, request: FastifyRequest, token?: string): string {
  const query = new URLSearchParams();
  if (token) query.set('token', token);
  if (isEmbedQuery(request)) query.set('embed', '1');
  const address = storeReturnUrl(ctx.deps.config, store, (request.query as { return?: unknown }).return);
  if (address) query.set('return', address);
  const text = query.toString();
  return text ? `?${text}` : '';
}

/** The card page of a subscription (the buyer's `Update payment method`): its link's token opens it. */
const METHOD_POLICY: RoutePolicy = {
  auth: { kind: 'public', audience: 'storefront' },
  csrf: 'none',
  cors: 'none',
  errors: ['not_found', 'validation_failed', 'invalid_transition'],
};

const methodPageError = (reply: FastifyReply, error: PublicError) =>
  sendPage(
    reply,
    {
      title: 'Update payment method',
      body: `<h1>Update payment method</h1>\n<p role="alert">${escapeHtml(error.message)}</p>`,
    },
    error.status,
  );

/** A subscription's first order: what is charged today and next, as the checkout page says it. */
async function chargesOf(ctx: PlainContext, order: Order): Promise<ChargesAhead | null> {
  if (!order.subscriptionId) return null;
  const line = await ctx.em.findOne(OrderLineSchema, { order: order.id }, { fields: ['planTrialDays'] });
  return chargesAhead(ctx, order, line?.planTrialDays ?? 0);
}

export const TEST_PAY_ROUTES: PlainRoute[] = [
  plainRoute({
    name: 'testPay.methodPage',
    method: 'GET',
    path: '/pay/test/method/{subscriptionId}',
    body: 'none',
    policy: METHOD_POLICY,
    openapi: false,
    enabled: testPayPageEnabled,
    renderError: methodPageError,
    async handler(ctx, request, reply) {
      const token = ctx.query.token;
      const { subscription, store } = await openTestMethodPage(ctx, ctx.params.subscriptionId!, token);
      const declined =
        (request.query as { declined?: string }).declined === '1'
          ? `<p role="alert">The test card Declines was declined; nothing was saved. Choose another card.</p>\n`
          : '';
      const body = `<h1>Update payment method</h1>
${declined}<p class="notice">This is the test gateway: no money moves. The card you choose pays the next renewals.</p>
<dl class="summary card">
<div><dt>Store</dt><dd>${escapeHtml(store.name)}</dd></div>
<div><dt>Subscription</dt><dd>${escapeHtml(subscription.productName)}</dd></div>
</dl>
<form method="post" action="${escapeHtml(`/pay/test/method/${subscription.id}`)}">
<input type="hidden" name="token" value="${escapeHtml(token!)}">
${cardChoices(TEST_CARDS)}
<button type="submit" class="primary">Save card</button>
</form>
<p><a href="${escapeHtml(accountPageUrl(store, subscription.livemode))}">Back to your account</a></p>`;
      return sendPage(reply, {
        title: 'Update payment method',
        body,
        brand: pageBrand(ctx.deps.config, store, request.query, false),
      });
    },
  }),
  plainRoute({
    name: 'testPay.saveMethod',
    method: 'POST',
    path: '/pay/test/method/{subscriptionId}',
    body: 'form',
    policy: METHOD_POLICY,
    openapi: false,
    enabled: testPayPageEnabled,
    renderError: methodPageError,
    async handler(ctx, request, reply) {
      const body = request.body as Record<string, string> | undefined;
      const token = body?.token;
      const { subscription, store } = await openTestMethodPage(ctx, ctx.params.subscriptionId!, token);
      const card = cardOf(body);
      if (!(SAVABLE_CARDS as readonly string[]).includes(card)) {
        const back = new URLSearchParams({ token: token!, declined: '1' });
        return reply.redirect(`/pay/test/method/${subscription.id}?${back.toString()}`, 303);
      }
      await saveTestCardForSubscription(ctx, subscription, card);
      request.log.info(
        { gateway: 'test', subscriptionId: subscription.id, card },
        'test card saved for a subscription',
      );
      return reply.redirect(accountPageUrl(store, subscription.livemode, 'payment-method'), 303);
    },
  }),
  plainRoute({
    name: 'testPay.page',
    method: 'GET',
    path: '/pay/test/{orderId}',
    body: 'none',
    policy: POLICY,
    openapi: false,
    enabled: testPayPageEnabled,
    renderError: payError,
    async handler(ctx, request, reply) {
      const embed = isEmbedQuery(request);
      const { order, store, token } = await open(ctx, undefined);
      const amount = formatMoney(order.priceMinor, order.currency);
      const brand = pageBrand(ctx.deps.config, store, request.query, embed);
      const back = `/checkout/${order.id}${carried(ctx, store, request, token)}`;
      const payable = order.status === 'pending' && order.paymentMethod === 'test';
      const charges = payable ? await chargesOf(ctx, order) : undefined;
      const declined =
        payable && (request.query as { declined?: string }).declined === '1'
          ? `<p role="alert">The test card Declines was declined; the order is not paid. Choose another card.</p>\n`
          : '';
      const body = `<h1>Test payment</h1>
${declined}<p class="notice">This is the test gateway: no money moves.</p>
<dl class="summary card">
<div><dt>Store</dt><dd>${escapeHtml(store.name)}</dd></div>
<div><dt>Order</dt><dd>${publicOrderNumber(order.number)}</dd></div>
<div><dt>Amount</dt><dd>${escapeHtml(amount)}</dd></div>
</dl>
${charges ? `<p class="charges" id="charges">${escapeHtml(chargesText(charges, order.currency))}</p>\n` : ''}
${
  payable
    ? `<form method="post" action="${escapeHtml(`/pay/test/${order.id}${carried(ctx, store, request)}`)}">
<input type="hidden" name="token" value="${escapeHtml(token)}">
${cardChoices()}
<button type="submit" class="primary">Pay ${escapeHtml(amount)}</button>
</form>`
    : `<p role="alert">This order is not waiting for a test payment.</p>`
}
<p><a href="${escapeHtml(back)}">Back to the checkout</a></p>`;
      return sendPage(reply, { title: 'Test payment', body, embed, brand });
    },
  }),
  plainRoute({
    name: 'testPay.pay',
    method: 'POST',
    path: '/pay/test/{orderId}',
    body: 'form',
    policy: POLICY,
    openapi: false,
    enabled: testPayPageEnabled,
    renderError: payError,
    async handler(ctx, request, reply) {
      const body = request.body as Record<string, string> | undefined;
      const { order, store, token } = await open(ctx, body);
      const card = cardOf(body);
      if (order.status === 'pending' && order.paymentMethod === 'test') {
        const eventId = `page_${randomBytes(12).toString('hex')}`;
        const declined = card === 'declines';
        const outcome = await handleNotification(ctx, {
          gateway: 'test',
          notification: {
            eventId,
            kind: declined ? 'failed' : 'paid',
            orderId: order.id,
            amountMinor: order.priceMinor,
            currency: order.currency,
            providerRef: `test:${eventId}`,
            // Saved whether or not the order asked (docs/decisions.md, Saved payment methods).
            ...(declined ? {} : { savedMethod: { gateway: 'test' as const, customerRef: null, methodRef: card } }),
          },
          now: ctx.clock.now(),
        });
        request.log.info({ gateway: 'test', eventId, orderId: order.id, card, outcome }, 'test pay page');
        if (declined) {
          const back = new URLSearchParams(carried(ctx, store, request, token).slice(1));
          back.set('declined', '1');
          return reply.redirect(`/pay/test/${order.id}?${back.toString()}`, 303);
        }
      }
      return reply.redirect(`/orders/${order.id}${carried(ctx, store, request, token)}`, 303);
    },
  }),
];
