/** The webhooks benchmark's data: an endpoint and its store in SQL, and order.created events. */
import { randomBytes } from 'node:crypto';
import { withClient } from '../lib/db.mjs';
import { importDist } from '../lib/service.mjs';

const PRODUCTS = [
  'Lifetime License - Pro Edition',
  'Game Key (Steam, Global)',
  'Premium Theme Pack',
  'Discord Bot Subscription (1 month)',
  'E-book: Practical PostgreSQL',
];
const COUNTRIES = ['US', 'DE', 'GB', 'FR', 'NL', 'CA', 'BR', 'PL'];

/** An `order.created` payload as checkout writes it ({ order: toOrderDetail(order) }), about 1 KB. */
export function orderPayload(storeId, n, at, extra = {}) {
  const price = 4.99 + (n % 40) * 2.5;
  const iso = at.toISOString();
  return {
    order: {
      id: randomBytes(12).toString('hex').slice(0, 24),
      orderId: `ORD-${100_000 + n}`,
      storeId,
      status: 'pending',
      productName: PRODUCTS[n % PRODUCTS.length],
      price: Number(price.toFixed(2)),
      paid: 0,
      paymentMethod: ['stripe', 'paypal', 'crypto'][n % 3],
      customerEmail: `buyer-${n % 5000}@example.test`,
      country: COUNTRIES[n % COUNTRIES.length],
      keyCount: 0,
      createdAt: iso,
      completedAt: null,
      updatedAt: iso,
      note:
        n % 3 === 0
          ? 'Please send the key to my second address as well; I bought this as a gift for a friend who will redeem it on another account.'
          : '',
      customFieldResponses: [
        { name: 'Discord username', value: `buyer_${n % 5000}#${String(1000 + (n % 9000)).padStart(4, '0')}` },
        { name: 'Minecraft username', value: `Player${n % 5000}` },
        {
          name: 'How did you hear about us?',
          value: 'A friend recommended the store on a community server; the reviews looked trustworthy.',
        },
        {
          name: 'Company / VAT number (optional)',
          value: n % 4 === 0 ? `DE${String(100_000_000 + n).slice(0, 9)}` : '',
        },
        {
          name: 'Anything else?',
          value: 'Thanks! Looking forward to the delivery, please keep the invoice in English.',
        },
      ],
    },
    ...extra,
  };
}

/** A user, a store and one webhook whose `secret` is sealed as the service seals it; returns the ids. */
export async function seedEndpoint(url, encryptionKey, receiverUrl, secret) {
  const { seal, deriveKey } = await importDist('lib/crypto.js');
  const { newId } = await importDist('lib/ids.js');
  const tag = randomBytes(4).toString('hex');
  const ids = { userId: newId(), storeId: newId(), webhookId: newId() };
  await withClient(url, async (client) => {
    await client.query('begin');
    await client.query(
      `insert into "user" (id, email, password_hash, created_at, updated_at) values ($1, $2, null, now(), now())`,
      [ids.userId, `bench-${tag}@example.test`],
    );
    await client.query(
      `insert into store (id, name, subdomain, currency, created_at, updated_at) values ($1, 'Bench store', $2, 'USD', now(), now())`,
      [ids.storeId, `bench-${tag}`],
    );
    await client.query(
      `insert into store_member (id, store_id, user_id, role, created_at) values ($1, $2, $3, 'owner', now())`,
      [newId(), ids.storeId, ids.userId],
    );
    await client.query(
      `insert into webhook (id, store_id, name, url, secret_enc, secret_prefix, events, enabled, created_at, updated_at)
       values ($1, $2, 'Bench receiver', $3, $4, $5, '{order.created}', true, now(), now())`,
      [
        ids.webhookId,
        ids.storeId,
        receiverUrl,
        seal(deriveKey(encryptionKey, 'webhook-secret'), secret),
        secret.slice(0, 12),
      ],
    );
    await client.query('commit');
  });
  return { ...ids, secret, newId };
}

/** `count` events inserted in one statement, created "now" (ms precision, as the service writes them). */
export async function seedEvents(url, storeId, count, newId) {
  const now = new Date();
  const ids = Array.from({ length: count }, () => `evt_${newId()}`);
  const payloads = ids.map((_, n) => JSON.stringify(orderPayload(storeId, n, now)));
  await withClient(url, (client) =>
    client.query(
      `insert into event (id, store_id, type, payload, created_at, dispatched_at)
       select id, $3, 'order.created', payload, $4, null from unnest($1::text[], $2::jsonb[]) as t(id, payload)`,
      [ids, payloads, storeId, now],
    ),
  );
  const bytes = payloads.reduce((sum, p) => sum + Buffer.byteLength(p), 0) / count;
  return { ids, bytes };
}
