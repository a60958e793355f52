/** The soak's shop: a seller with a store, four products, enough license keys, and a webhook to the receiver. */
import { randomBytes } from 'node:crypto';
import { check } from '../lib/check.mjs';
import { withClient } from '../lib/db.mjs';
import { expectStatus, request } from '../lib/http.mjs';
import { createProduct, importKeys, provisionMerchant } from '../lib/service.mjs';
import { MIX, RATE, SOAK_S, WEBHOOK_EVENTS } from './knobs.mjs';

/** Provisions it through the service's API; the receiver learns the webhook's secret. */
export async function provisionShop({ service, db, receiver, receiverState }) {
  const merchant = await provisionMerchant(service.url, {
    stores: 1,
    scopes: ['order:read', 'webhook:read', 'webhook:write'],
    redisKeyPrefix: service.redisKeyPrefix,
  });
  const [storeId] = merchant.storeIds;
  const subdomain = await withClient(
    db.url,
    async (client) => (await client.query('select subdomain from store where id = $1', [storeId])).rows[0].subdomain,
  );
  const checkoutRate = RATE * MIX.checkout;
  const keysNeeded = Math.ceil((checkoutRate / 2) * SOAK_S * 1.25) + 200;
  const products = {
    keyed: await createProduct(service.url, merchant, storeId, {
      name: 'Soak licence',
      price: 9.99,
      deliveryMethods: ['licenseKeys'],
    }),
    manual: await createProduct(service.url, merchant, storeId, {
      name: 'Soak manual delivery',
      price: 4.99,
      deliveryMethods: ['manualDelivery'],
      maxQuantity: 5,
    }),
    bundle: await createProduct(service.url, merchant, storeId, {
      name: 'Soak bundle',
      price: 24.5,
      deliveryMethods: ['deliveryInstructions'],
      deliveryInstructions: 'Download from the link in your e-mail.',
      minQuantity: 2,
    }),
    draft: await createProduct(service.url, merchant, storeId, {
      name: 'Soak draft',
      price: 1,
      deliveryMethods: ['manualDelivery'],
      status: 'draft',
    }),
  };
  const imported = await importKeys(
    service.url,
    merchant,
    storeId,
    products.keyed.id,
    Array.from(
      { length: keysNeeded },
      (_, i) => `SOAK-${String(i).padStart(6, '0')}-${randomBytes(6).toString('hex')}`,
    ),
  );
  check(imported.added === keysNeeded, `imported ${keysNeeded} keys (got ${JSON.stringify(imported)})`);
  const auth = { authorization: `Bearer ${merchant.apiKey}` };
  const created = await expectStatus(
    request(`${service.url}/api/merchant/v1/stores/${storeId}/webhooks`, {
      method: 'POST',
      headers: auth,
      body: { name: 'soak receiver', url: `http://127.0.0.1:${receiver.port}/hook`, events: WEBHOOK_EVENTS },
      localAddress: merchant.sourceAddress,
    }),
    201,
    'POST /api/merchant/v1/stores/{storeId}/webhooks',
  );
  receiverState.secret = created.json.secret;
  check(
    typeof receiverState.secret === 'string' && receiverState.secret.length > 0,
    'the webhook answer carries its secret',
  );
  const webhookCreatedAt = new Date();
  console.log(
    `seller ${merchant.email}, store ${storeId} (${subdomain}); products ${Object.entries(products)
      .map(([key, p]) => `${key} ${p.id}`)
      .join(', ')}; ${keysNeeded} keys; webhook ${created.json.id} for ${WEBHOOK_EVENTS.join(', ')}`,
  );
  return { merchant, storeId, subdomain, products, auth, webhookId: created.json.id, webhookCreatedAt };
}
