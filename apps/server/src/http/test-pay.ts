/**
 * The `test` gateway's pay page (outside production, with TEST_GATEWAY_SECRET set): where
 * `POST /api/checkout/start` with `test` redirects. It shows the amount and a Pay button; the
 * button settles the order through the same notification path a signed test notification
 * takes (handleNotification), then sends the buyer to the order page. Plain HTML and a form:
 * no script. The checkout token (form field, query or svc_checkout cookie) opens the order.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppDeps } from '../deps.js';
import { readCookie } from '../lib/cookies.js';
import { AppError, toPublicError } from '../lib/errors.js';
import { escapeHtml } from '../lib/html.js';
import { looksLikeId } from '../lib/ids.js';
import { minorToAmount } from '../lib/money.js';
import { CHECKOUT_COOKIE, orderForToken } from '../modules/checkout/checkout.service.js';
import { publicOrderNumber } from '../modules/orders/orders.service.js';
import { handleNotification } from '../modules/payments/notifications.js';
import { StoreSchema } from '../modules/stores/stores.entities.js';
import { sendPage } from './pages.js';

interface PayRequest {
  Params: { orderId: string };
  Querystring: { token?: string; embed?: string };
  Body: Record<string, string> | undefined;
}

function tokenOf(request: FastifyRequest<PayRequest>): string | undefined {
  const given = request.body?.token ?? request.query.token;
  if (given) return given;
  const [cookieOrder, cookieToken] = (readCookie(request, CHECKOUT_COOKIE) ?? '').split('.');
  return cookieOrder === request.params.orderId ? cookieToken : undefined;
}

export async function testPayPlugin(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  const open = async (request: FastifyRequest<PayRequest>) => {
    if (!looksLikeId(request.params.orderId)) throw new AppError('not_found', 'There is no such order.');
    const token = tokenOf(request);
    if (!token) throw new AppError('unauthorized', 'Open this page from the checkout.');
    const em = deps.orm.em.fork();
    const order = await orderForToken(em, request.params.orderId, token);
    const store = await em.findOneOrFail(StoreSchema, { id: order.store.id });
    return { em, order, store, token };
  };

  const fail = (reply: Parameters<typeof sendPage>[0], error: unknown, embed: boolean) => {
    const pub = toPublicError(error);
    return sendPage(reply, { title: 'Test payment', body: `<h1>Test payment</h1>\n<p role="alert">${escapeHtml(pub.message)}</p>`, embed }, pub.status);
  };

  app.get<PayRequest>('/pay/test/:orderId', async (request, reply) => {
    const embed = request.query.embed === '1';
    try {
      const { order, store, token } = await open(request);
      const amount = `${minorToAmount(order.priceMinor, order.currency).toFixed(2)} ${order.currency}`;
      const back = `/checkout/${order.id}?token=${encodeURIComponent(token)}${embed ? '&embed=1' : ''}`;
      const payable = order.status === 'pending' && order.paymentMethod === 'test';
      const body = `<h1>Test payment</h1>
<p class="notice">This is the test gateway: no money moves. It exists only outside production.</p>
<dl class="summary">
<div><dt>Store</dt><dd>${escapeHtml(store.name)}</dd></div>
<div><dt>Order</dt><dd>${publicOrderNumber(order.number)}</dd></div>
<div><dt>Amount</dt><dd>${escapeHtml(amount)}</dd></div>
</dl>
${
  payable
    ? `<form method="post" action="/pay/test/${order.id}${embed ? '?embed=1' : ''}">
<input type="hidden" name="token" value="${escapeHtml(token)}">
<button type="submit" class="primary">Pay ${escapeHtml(amount)}</button>
</form>`
    : `<p role="alert">This order is not waiting for a test payment.</p>`
}
<p><a href="${escapeHtml(back)}">Back to the checkout</a></p>`;
      return sendPage(reply, { title: 'Test payment', body, embed });
    } catch (error) {
      return fail(reply, error, embed);
    }
  });

  app.post<PayRequest>('/pay/test/:orderId', async (request, reply) => {
    const embed = request.query.embed === '1';
    try {
      const { em, order, token } = await open(request);
      if (order.status === 'pending' && order.paymentMethod === 'test') {
        const eventId = `page_${randomBytes(12).toString('hex')}`;
        const outcome = await handleNotification(
          em,
          'test',
          { eventId, kind: 'paid', orderId: order.id, amountMinor: order.priceMinor, currency: order.currency, providerRef: `test:${eventId}` },
          deps.clock.now(),
        );
        request.log.info({ gateway: 'test', eventId, orderId: order.id, outcome }, 'test pay page');
      }
      return reply.redirect(`/orders/${order.id}?token=${encodeURIComponent(token)}${embed ? '&embed=1' : ''}`, 303);
    } catch (error) {
      return fail(reply, error, embed);
    }
  });
}
