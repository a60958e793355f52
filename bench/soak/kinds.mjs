/** What each kind of the soak's requests sends, and from which agent; each checked once before the clock starts. */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { check } from '../lib/check.mjs';
import { onCleanup } from '../lib/cleanup.mjs';
import { randomLoopback } from '../lib/service.mjs';
import { send } from './http.mjs';
import { KINDS } from './knobs.mjs';

export async function requestKinds({ service, shop }) {
  const { storeId, subdomain, products, auth } = shop;
  const unknownId = `z${randomBytes(16).toString('hex').slice(0, 23)}`;
  const carts = [
    [
      { productId: products.keyed.id, quantity: 1 },
      { productId: products.manual.id, quantity: 2 },
      { productId: products.keyed.id, quantity: 1 },
    ],
    [
      { productId: products.manual.id, quantity: 4 },
      { productId: products.bundle.id, quantity: 1 },
      { productId: unknownId, quantity: 1 },
      { productId: products.manual.id, quantity: 3 },
    ],
    [
      { productId: products.bundle.id, quantity: 2 },
      { productId: products.draft.id, quantity: 1 },
      { productId: products.keyed.id, quantity: 2 },
      { productId: unknownId, quantity: 1 },
      { productId: products.manual.id, quantity: 1 },
    ],
  ].map((lines) => `/api/v1/cart?${new URLSearchParams({ storeId, cart: JSON.stringify(lines) })}`);
  const address = randomLoopback();
  const limitedAddress = randomLoopback();
  const agents = Object.fromEntries(
    KINDS.map((kind) => [
      kind,
      new http.Agent({
        keepAlive: true,
        maxSockets: 64,
        localAddress: kind === 'limited' ? limitedAddress : address,
      }),
    ]),
  );
  onCleanup('destroy the soak agents', () => Object.values(agents).forEach((agent) => agent.destroy()));
  const recentOrders = [];
  const settleQueue = [];
  let checkoutCount = 0;
  const counters = { checkouts200: 0, settled: 0, notSettled: 0 };
  const builders = {
    catalog: () => ({ url: `${service.url}/api/stores/by-subdomain/${subdomain}/storefront` }),
    cart: (n) => ({ url: `${service.url}${carts[n % carts.length]}` }),
    checkout: () => {
      const n = checkoutCount++;
      const product = n % 2 === 0 ? products.keyed : products.manual;
      return {
        url: `${service.url}/api/v1/checkout`,
        method: 'POST',
        headers: { 'user-agent': 'svc-bench-soak/1' },
        body: JSON.stringify({
          shopId: storeId,
          cart: [{ productId: product.id, quantity: 1 }],
          email: `buyer-${n % 5000}@example.test`,
        }),
        amount: product.price,
      };
    },
    merchantList: () => ({ url: `${service.url}/api/merchant/v1/stores/${storeId}/orders?limit=20`, headers: auth }),
    merchantOrder: (n) => {
      const orderId =
        recentOrders.length > 0
          ? recentOrders[recentOrders.length - 1 - (n % Math.min(50, recentOrders.length))]
          : undefined;
      return orderId
        ? { url: `${service.url}/api/merchant/v1/stores/${storeId}/orders/${orderId}`, headers: auth }
        : { url: `${service.url}/api/merchant/v1/stores/${storeId}/orders?limit=1`, headers: auth };
    },
    limited: () => ({
      url: `${service.url}/api/coupons/validate`,
      method: 'POST',
      body: JSON.stringify({ storeId, code: 'SOAK-NO-SUCH-CODE' }),
    }),
  };

  // Check each kind once before the clock starts (and warm nothing else).
  for (const kind of ['catalog', 'cart', 'merchantList', 'limited']) {
    const spec = builders[kind](0);
    const answer = await send(agents[kind], spec.url, spec);
    check(
      answer.status === 200,
      `${kind}: ${spec.method ?? 'GET'} ${spec.url.replace(service.url, '')} answers 200 (got ${answer.status}: ${answer.text.slice(0, 300)})`,
    );
  }
  checkoutCount = 0;
  return { builders, agents, recentOrders, settleQueue, counters };
}
