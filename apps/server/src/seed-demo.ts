/**
 * `svc seed-demo`: a demo store worth looking at, made through the same services the API
 * uses — a product of every delivery kind, keys in stock, a file, a coupon, a webhook to
 * nowhere (disabled), and a few dozen orders of the last 30 days in every status an order
 * rests in (some paid with keys delivered), plus an API key so the printed curl shows them.
 * Running it again changes nothing and says how to make another key.
 */
import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { API_KEY_SCOPES, type TCartLine } from '@svc/schemas';
import type { Runtime } from './runtime.js';
import { DEMO_OWNER, DEMO_SUBDOMAIN } from './demo.js';
import type { Clock } from './lib/clock.js';
import { randomToken } from './lib/crypto.js';
import { newId } from './lib/ids.js';
import { serviceContext } from './modules/request/context.js';
import { createApiKey } from './modules/api-keys/api-keys.service.js';
import { createProduct } from './modules/catalog/catalog.service.js';
import { restock } from './flows/restock.js';
import { uploadProductFile } from './modules/catalog/files.service.js';
import { createOrder, startCheckout } from './flows/place-order.js';
import { expirePendingOrders } from './flows/expire-orders.js';
import { CouponSchema } from './modules/coupons/coupons.entities.js';
import { cancelStoreOrder, markOrderDelivered, markOrderPaid, refundStoreOrder } from './flows/seller-order-actions.js';
import { createUser } from './modules/identity/identity.service.js';
import { StoreSchema } from './modules/stores/stores.entities.js';
import { createStore } from './modules/stores/stores.service.js';
import { createWebhook, updateWebhook } from './modules/webhooks/endpoints.service.js';

const DAY_MS = 24 * 3_600_000;
const COUNTRIES = ['US', 'DE', 'GB', 'FR', 'NL', 'SE', 'BR', 'JP', 'CA', 'AU'];

/** The command a person types to run this program again (`node apps/server/dist/main.js`, or `svc` when installed). */
function svcCommand(): string {
  const entry = process.argv[1];
  if (!entry) return 'svc';
  const relative = path.relative(process.cwd(), entry);
  return `node ${relative && !relative.startsWith('..') ? relative : entry}`;
}

/** What happens to a seeded order after it is created. */
type Fate = 'completed' | 'delivered' | 'processing' | 'refunded' | 'cancelled' | 'expired' | 'pending';

interface PlannedOrder {
  fate: Fate;
  cart: TCartLine[];
  coupon?: string;
  customFields?: Record<string, string>;
  /** How long ago it was placed. */
  ageMs: number;
}

export async function seedDemo(runtime: Runtime): Promise<string> {
  const { deps } = runtime;
  const now = deps.clock.now();
  const ctxAt = (clock: Clock = deps.clock) => ({ ...serviceContext(deps), clock });
  const existing = await deps.orm.em.fork().findOne(StoreSchema, { subdomain: DEMO_SUBDOMAIN });
  if (existing) {
    return [
      `the demo store already exists: ${deps.config.publicUrl}/api/store/${DEMO_SUBDOMAIN} (id ${existing.id}); nothing was changed`,
      `its API key was shown when it was made; make another with:`,
      `  ${svcCommand()} create-api-key --owner ${DEMO_OWNER} --name demo-2 --scopes all --stores ${DEMO_SUBDOMAIN}`,
    ].join('\n');
  }

  const password = randomToken(12);
  const owner = await createUser(ctxAt(), { email: DEMO_OWNER, password });
  const store = await createStore(ctxAt(), owner, { name: 'Demo Store', subdomain: DEMO_SUBDOMAIN, currency: 'USD' });

  const game = await createProduct(ctxAt(), {
    storeId: store.id,
    name: 'Starfall — Steam key',
    description: 'A license key, delivered the moment the payment settles.',
    price: 19.99,
    deliveryMethods: ['licenseKeys'],
    maxQuantity: 5,
    // Its keys are licenses the game checks at every start (License API): two machines each, a year.
    licenseActivationLimit: 2,
    licenseValidityDays: 365,
  });
  const keys = Array.from(
    { length: 40 },
    () => `STAR-${randomBytes(6).toString('hex').toUpperCase().match(/.{4}/g)!.join('-')}`,
  );
  await restock(ctxAt(), { storeId: store.id, productId: game.id, keys });

  const ebook = await createProduct(ctxAt(), {
    storeId: store.id,
    name: 'The Storefront Handbook (PDF)',
    price: 9,
    deliveryMethods: ['downloadFiles', 'deliveryInstructions'],
    deliveryInstructions:
      'Thanks for buying! The download link works for 24 hours; come back to this page for a new one.',
  });
  const text = 'The Storefront Handbook\n\nChapter 1: Sell digital goods.\n';
  await uploadProductFile(ctxAt(), {
    storeId: store.id,
    productId: ebook.id,
    name: 'handbook.txt',
    contentType: 'text/plain',
    stream: Readable.from([Buffer.from(text)]),
  });

  const review = await createProduct(ctxAt(), {
    storeId: store.id,
    name: 'Logo review (manual delivery)',
    price: 45,
    deliveryMethods: ['manualDelivery'],
    customFields: [
      { name: 'Website', type: 'text', required: true },
      { name: 'Deadline', type: 'text', required: false },
    ],
  });
  const discord = await createProduct(ctxAt(), {
    storeId: store.id,
    name: 'Discord community access',
    price: 5,
    deliveryMethods: ['deliveryInstructions'],
    deliveryInstructions: 'Join with this invite: https://discord.example/invite/demo',
  });

  // Every method; the checkout page offers those this process can take (test outside production, stripe when configured).
  await deps.orm.em
    .fork()
    .nativeUpdate(StoreSchema, { id: store.id }, { settings: { paymentMethods: ['test', 'manual', 'stripe'] } });

  await deps.orm.em.fork().insert(CouponSchema, {
    id: newId(),
    store: store.id,
    livemode: true,
    code: 'DEMO10',
    discountType: 'percent',
    discountValue: 10,
    productIds: [],
    maxUses: null,
    uses: 0,
    minAmountMinor: null,
    expiresAt: null,
    active: true,
    createdAt: now,
    updatedAt: now,
  });

  // A receiver that does not exist, switched off before any order: the log stays empty, the dashboard shows a disabled endpoint.
  const hook = await createWebhook(ctxAt(), {
    storeId: store.id,
    name: 'Fulfilment bot (example)',
    url: 'https://hooks.example.invalid/svc',
    events: ['order.paid', 'order.completed', 'order.refunded'],
  });
  await updateWebhook(ctxAt(), { storeId: store.id, webhookId: hook.id, enabled: false });

  const plan = planOrders({ game: game.id, ebook: ebook.id, review: review.id, discord: discord.id });
  const counts = new Map<Fate, number>();
  for (const [index, planned] of plan.entries()) {
    const placedAt = now.getTime() - planned.ageMs;
    const at = (offsetMs: number): Clock => ({ now: () => new Date(Math.min(placedAt + offsetMs, now.getTime())) });
    const buyer = {
      ip: `203.0.113.${10 + index}`,
      userAgent: 'Mozilla/5.0 (demo)',
      country: COUNTRIES[index % COUNTRIES.length]!,
    };
    const { order, checkoutToken } = await createOrder(
      ctxAt(at(0)),
      {
        store: store.id,
        cart: planned.cart,
        email: `buyer${index + 1}@example.com`,
        coupon: planned.coupon,
        customFields: planned.customFields,
      },
      buyer,
    );
    const ref = { storeId: store.id, orderId: order.id };
    if (planned.fate !== 'expired') {
      await startCheckout(
        ctxAt(at(60_000)),
        { orderId: order.id, token: checkoutToken, paymentMethod: 'manual' },
        buyer,
      );
    }
    if (['completed', 'delivered', 'processing', 'refunded'].includes(planned.fate))
      await markOrderPaid(ctxAt(at(20 * 60_000)), ref);
    if (planned.fate === 'delivered')
      await markOrderDelivered(ctxAt(at(DAY_MS / 2)), {
        ...ref,
        content: 'Your review is attached: https://files.example/review.pdf',
      });
    if (planned.fate === 'refunded') await refundStoreOrder(ctxAt(at(2 * DAY_MS)), ref);
    if (planned.fate === 'cancelled') await cancelStoreOrder(ctxAt(at(3 * 3_600_000)), ref);
    counts.set(planned.fate, (counts.get(planned.fate) ?? 0) + 1);
  }
  // The orders left unpaid past the checkout lifetime, as the scheduled job would have found them.
  await expirePendingOrders(ctxAt({ now: () => now }));

  const { key } = await createApiKey(ctxAt(), owner, {
    name: 'demo',
    scopes: [...API_KEY_SCOPES],
    storeIds: [store.id],
  });
  const summary = [...counts]
    .map(([fate, n]) => `${n} ${fate === 'delivered' ? 'completed (delivered by the seller)' : fate}`)
    .join(', ');

  return [
    `demo store "${store.name}" (${store.id}), subdomain ${DEMO_SUBDOMAIN}`,
    `  orders: ${plan.length} over the last 30 days: ${summary}`,
    `  storefront: ${deps.config.publicUrl}/api/stores/by-subdomain/${DEMO_SUBDOMAIN}/storefront`,
    `  customer area: ${deps.config.publicUrl}/account/${DEMO_SUBDOMAIN}`,
    `  buy button: <script src="${deps.config.publicUrl}/embed.js" async></script><button data-svc-store="${DEMO_SUBDOMAIN}" data-svc-product="${game.id}">Buy</button>`,
    `  dashboard: ${deps.config.publicUrl}/dashboard/ (sign in as ${DEMO_OWNER} / ${password})`,
    `  coupon: DEMO10 (10% off)`,
    `  webhook: "${hook.name}" (disabled; point it at your receiver and enable it)`,
    `  merchant API key (shown once): ${key}`,
    `  try: curl -H "Authorization: Bearer ${key}" ${deps.config.publicUrl}/api/merchant/v1/stores/${store.id}/orders`,
  ].join('\n');
}

/**
 * Three dozen orders, oldest first: most completed (keys, files, instructions), some waiting for
 * the seller, refunded, cancelled, expired, and a few placed minutes ago still awaiting payment.
 */
function planOrders(products: { game: string; ebook: string; review: string; discord: string }): PlannedOrder[] {
  const website = { Website: 'https://shop.example' };
  const older: Array<Omit<PlannedOrder, 'ageMs'>> = [];
  for (let i = 0; i < 12; i++)
    older.push({
      fate: 'completed',
      cart: [{ productId: products.game, quantity: 1 + (i % 2) }],
      coupon: i % 4 === 0 ? 'DEMO10' : undefined,
    });
  for (let i = 0; i < 5; i++) older.push({ fate: 'completed', cart: [{ productId: products.ebook, quantity: 1 }] });
  for (let i = 0; i < 3; i++)
    older.push({
      fate: 'completed',
      cart: [
        { productId: products.discord, quantity: 1 },
        ...(i === 0 ? [{ productId: products.ebook, quantity: 1 }] : []),
      ],
    });
  for (let i = 0; i < 2; i++)
    older.push({ fate: 'delivered', cart: [{ productId: products.review, quantity: 1 }], customFields: website });
  for (let i = 0; i < 3; i++)
    older.push({ fate: 'processing', cart: [{ productId: products.review, quantity: 1 }], customFields: website });
  for (let i = 0; i < 3; i++)
    older.push({ fate: 'refunded', cart: [{ productId: i === 0 ? products.ebook : products.game, quantity: 1 }] });
  for (let i = 0; i < 3; i++) older.push({ fate: 'cancelled', cart: [{ productId: products.discord, quantity: 1 }] });
  for (let i = 0; i < 3; i++) older.push({ fate: 'expired', cart: [{ productId: products.game, quantity: 1 }] });
  // Spread over 30 days, interleaved so every stretch of the list shows a mix.
  const shuffled = older
    .map((order, i) => ({ order, sort: (i * 7919) % older.length }))
    .sort((a, b) => a.sort - b.sort);
  const planned: PlannedOrder[] = shuffled.map(({ order }, i) => ({
    ...order,
    ageMs: Math.round((30 - (29 * i) / shuffled.length) * DAY_MS),
  }));
  // Placed in the last half hour: still within the checkout lifetime.
  for (let i = 0; i < 3; i++)
    planned.push({
      fate: 'pending',
      cart: [{ productId: [products.game, products.ebook, products.discord][i]!, quantity: 1 }],
      ageMs: (25 - 10 * i) * 60_000,
    });
  return planned;
}
