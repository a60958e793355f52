/**
 * The floor for `POST /api/v1/licenses/validate`: a bare Fastify route doing what the service's
 * validation does with the database, nothing else: the key's HMAC under the same derived key,
 * the same one statement on the (product_id, value_hash) unique index (with the status and expiry
 * it works out, a subscription's license by its subscription and store, joined by primary key), and
 * the same JSON (validate `{ productId, key, instanceId? }` -> `{ valid, reason, license, instance, lease }`,
 * 404 when no sold key matches), the lease signed as the service signs it (Ed25519 with
 * `node:crypto`, the store's current key read once from the database and unsealed with the same
 * derived key). No rate limit, no schema library, no ORM.
 *
 * Env: FLOOR_DATABASE_URL, FLOOR_ENCRYPTION_KEY (base64, the service's APP_ENCRYPTION_KEY),
 * PORT (0 = any), FLOOR_POOL_MAX (10). Prints `{"msg":"floor listening on ...","port":N}`.
 */
import { createDecipheriv, createHmac, createPrivateKey, hkdfSync, sign } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({
  connectionString: process.env.FLOOR_DATABASE_URL,
  max: Number(process.env.FLOOR_POOL_MAX ?? 10),
});
const master = Buffer.from(process.env.FLOOR_ENCRYPTION_KEY ?? '', 'base64');
const hashKey = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'svc:license-key-hash', 32));
const signingSealKey = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'svc:license-signing-key', 32));
const PUBLIC_URL = process.env.FLOOR_PUBLIC_URL ?? 'http://localhost:3000';

/** lib/crypto.ts unseal: AES-256-GCM, base64 of iv (12) | tag (16) | ciphertext. */
function unseal(key, sealed) {
  const raw = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

/** The store's current signing key for a mode, read once (the service reads it once a minute). */
const signingKeys = new Map();
async function signingKey(storeId, livemode) {
  const cacheKey = `${storeId}:${livemode}`;
  let key = signingKeys.get(cacheKey);
  if (!key) {
    const { rows } = await pool.query(
      'select id, private_key_sealed from license_signing_key where store_id = $1 and livemode = $2 and retired_at is null',
      [storeId, livemode],
    );
    const pkcs8 = Buffer.from(unseal(signingSealKey, rows[0].private_key_sealed), 'base64');
    key = { kid: rows[0].id, privateKey: createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }) };
    signingKeys.set(cacheKey, key);
  }
  return key;
}

/** modules/licenses/lease.ts signLease. */
async function signLease(row, instanceId, now) {
  const key = await signingKey(row.store_id, row.livemode);
  const at = row.clock_time ?? now;
  const iat = Math.floor(at.getTime() / 1000);
  const byDays = iat + row.lease_days * 86_400;
  const claims = {
    iss: PUBLIC_URL,
    sub: row.id,
    productId: row.product_id,
    instanceId,
    livemode: row.livemode,
    status: 'active',
    iat,
    exp: Math.min(byDays, row.expires_at ? Math.floor(row.expires_at.getTime() / 1000) : byDays),
  };
  const header = Buffer.from(JSON.stringify({ alg: 'EdDSA', typ: 'svc-lease+jwt', kid: key.kid })).toString(
    'base64url',
  );
  const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${input}.${sign(null, Buffer.from(input), key.privateKey).toString('base64url')}`;
}

// licenses.repo.ts EXPIRES_AT and STATUS.
const EXPIRES_AT = `case when k.subscription_id is null
    then k.assigned_at + p.license_validity_days * interval '1 day'
    else case s.status
      when 'trialing' then s.current_period_end
      when 'active' then s.current_period_end
      when 'past_due' then s.past_due_at + st.subscription_grace_days * interval '1 day'
      when 'paused' then s.paused_at
      when 'canceled' then s.ended_at
    end end`;
const STATUS = `case
    when k.status = 'revoked' or k.disabled_at is not null then 'disabled'
    when k.subscription_id is not null and (s.status is null or s.status not in ('trialing', 'active', 'past_due', 'canceled'))
      then 'inactive'
    when s.status = 'canceled' then 'expired'
    when (${EXPIRES_AT}) <= coalesce(s.clock_time, $1) then 'expired'
    else 'active' end`;

// licenses.repo.ts lookupLicense, unlocked.
const LOOKUP = {
  name: 'license-lookup',
  text: `select k.id, k.product_id, k.livemode, k.subscription_id, k.assigned_at,
            p.license_activation_limit as activation_limit, ${EXPIRES_AT} as expires_at, ${STATUS} as status,
            (select count(*) from license_instance c where c.license_key_id = k.id)::int as usage,
            p.store_id, st.license_lease_days as lease_days, s.clock_time,
            i.id as instance_id, i.name as instance_name, i.created_at as instance_created_at
       from license_key k
       join product p on p.id = k.product_id
       left join subscription s on s.id = k.subscription_id
       join store st on st.id = p.store_id
       left join license_instance i on i.id = $2 and i.license_key_id = k.id
      where k.product_id = $3 and k.value_hash = $4 and k.order_id is not null and k.assigned_at is not null`,
};
const REASONS = { active: null, disabled: 'disabled', inactive: 'subscription_inactive', expired: 'expired' };

const ID = /^[a-z0-9]{1,32}$/;
const app = Fastify({ logger: false });
app.post('/api/v1/licenses/validate', async (request, reply) => {
  const body = request.body;
  const keys = body && typeof body === 'object' ? Object.keys(body) : [];
  const valid =
    typeof body?.productId === 'string' &&
    ID.test(body.productId) &&
    typeof body.key === 'string' &&
    body.key.length >= 1 &&
    body.key.length <= 500 &&
    (body.instanceId === undefined || (typeof body.instanceId === 'string' && ID.test(body.instanceId))) &&
    keys.every((k) => k === 'productId' || k === 'key' || k === 'instanceId');
  if (!valid) return reply.code(400).send({ error: 'The request is not valid.', code: 'validation_failed' });
  const valueHash = createHmac('sha256', hashKey).update(body.key.trim()).digest('hex');
  const now = new Date();
  const { rows } = await pool.query({
    ...LOOKUP,
    values: [now, body.instanceId ?? null, body.productId, valueHash],
  });
  const row = rows[0];
  if (!row) return reply.code(404).send({ error: 'No license with this key for this product.', code: 'not_found' });
  const status = row.status;
  const instance = row.instance_id
    ? { id: row.instance_id, name: row.instance_name, createdAt: row.instance_created_at.toISOString() }
    : null;
  const reason = REASONS[status] ?? (body.instanceId !== undefined && !instance ? 'instance_not_found' : null);
  return {
    valid: reason === null,
    reason,
    license: {
      id: row.id,
      productId: row.product_id,
      livemode: row.livemode,
      status,
      activationLimit: row.activation_limit,
      activationUsage: row.usage,
      expiresAt: row.expires_at?.toISOString() ?? null,
      subscriptionId: row.subscription_id,
      createdAt: row.assigned_at.toISOString(),
    },
    instance,
    lease: reason === null ? await signLease(row, instance?.id ?? null, now) : null,
  };
});

const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
console.log(JSON.stringify({ level: 30, msg: `floor listening on ${address}`, port: app.server.address().port }));
for (const signal of ['SIGTERM', 'SIGINT'])
  process.once(
    signal,
    () =>
      void app
        .close()
        .then(() => pool.end())
        .then(() => process.exit(0)),
  );
