/**
 * `svc seed-demo`: a demo store with a product of every delivery kind, keys in stock, a
 * file, a coupon and an API key, so a fresh `npm start` shows something real. Running it
 * again changes nothing and says where the demo is.
 */
import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import type { Runtime } from './runtime.js';
import { randomToken } from './lib/crypto.js';
import { newId } from './lib/ids.js';
import { createApiKey } from './modules/api-keys/api-keys.service.js';
import { createProduct, importKeys } from './modules/catalog/catalog.service.js';
import { uploadProductFile } from './modules/catalog/files.service.js';
import { CouponSchema } from './modules/coupons/coupons.entities.js';
import { createUser } from './modules/identity/identity.service.js';
import { StoreSchema } from './modules/stores/stores.entities.js';
import { createStore } from './modules/stores/stores.service.js';

const SUBDOMAIN = 'demo';
const OWNER = 'demo@svc.test';

export async function seedDemo(runtime: Runtime): Promise<string> {
  const { deps } = runtime;
  const ctx = () => ({ em: deps.orm.em.fork(), clock: deps.clock, deps });
  const existing = await deps.orm.em.fork().findOne(StoreSchema, { subdomain: SUBDOMAIN });
  if (existing) return `the demo store already exists: ${deps.config.publicUrl}/api/stores/by-subdomain/${SUBDOMAIN}/storefront`;

  const password = randomToken(12);
  const owner = await createUser(ctx(), { email: OWNER, password });
  const store = await createStore(ctx(), owner, { name: 'Demo Store', subdomain: SUBDOMAIN, currency: 'USD' });

  const game = await createProduct(ctx(), {
    storeId: store.id,
    name: 'Starfall — Steam key',
    description: 'A license key, delivered the moment the payment settles.',
    price: 19.99,
    deliveryMethods: ['licenseKeys'],
    maxQuantity: 5,
  });
  const keys = Array.from({ length: 20 }, () => `STAR-${randomBytes(6).toString('hex').toUpperCase().match(/.{4}/g)!.join('-')}`);
  await importKeys(ctx(), { storeId: store.id, productId: game.id, keys });

  const ebook = await createProduct(ctx(), {
    storeId: store.id,
    name: 'The Storefront Handbook (PDF)',
    price: 9,
    deliveryMethods: ['downloadFiles', 'deliveryInstructions'],
    deliveryInstructions: 'Thanks for buying! The download link works for 24 hours; come back to this page for a new one.',
  });
  const text = 'The Storefront Handbook\n\nChapter 1: Sell digital goods.\n';
  await uploadProductFile(ctx(), { storeId: store.id, productId: ebook.id, name: 'handbook.txt', contentType: 'text/plain', stream: Readable.from([Buffer.from(text)]) });

  await createProduct(ctx(), {
    storeId: store.id,
    name: 'Logo review (manual delivery)',
    price: 45,
    deliveryMethods: ['manualDelivery'],
    customFields: [
      { name: 'Website', type: 'text', required: true },
      { name: 'Deadline', type: 'text', required: false },
    ],
  });
  await createProduct(ctx(), {
    storeId: store.id,
    name: 'Discord community access',
    price: 5,
    deliveryMethods: ['deliveryInstructions'],
    deliveryInstructions: 'Join with this invite: https://discord.example/invite/demo',
  });

  // Every method; the checkout page offers those this process can take (test outside production, stripe when configured).
  await deps.orm.em.fork().nativeUpdate(StoreSchema, { id: store.id }, { settings: { paymentMethods: ['test', 'manual', 'stripe'] } });

  const now = deps.clock.now();
  await deps.orm.em.fork().insert(CouponSchema, {
    id: newId(), store: store.id, code: 'DEMO10', discountType: 'percent', discountValue: 10, productIds: [], maxUses: null, uses: 0,
    minAmountMinor: null, expiresAt: null, active: true, createdAt: now, updatedAt: now,
  });
  const { key } = await createApiKey(ctx(), owner, {
    name: 'demo',
    scopes: ['order:read', 'order:update', 'webhook:read', 'webhook:write', 'webhook:delete'],
    storeIds: [store.id],
  });

  return [
    `demo store "${store.name}" (${store.id}), subdomain ${SUBDOMAIN}`,
    `  storefront: ${deps.config.publicUrl}/api/stores/by-subdomain/${SUBDOMAIN}/storefront`,
    `  customer area: ${deps.config.publicUrl}/account/${SUBDOMAIN}`,
    `  buy button: <script src="${deps.config.publicUrl}/embed.js" async></script><button data-svc-store="${SUBDOMAIN}" data-svc-product="${game.id}">Buy</button>`,
    `  seller login: ${OWNER} / ${password}`,
    `  coupon: DEMO10 (10% off)`,
    `  merchant API key (shown once): ${key}`,
    `  try: curl -H "Authorization: Bearer ${key}" ${deps.config.publicUrl}/api/merchant/v1/stores/${store.id}/orders`,
  ].join('\n');
}
