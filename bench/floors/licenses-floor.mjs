/**
 * The floor for `POST /api/v1/licenses/validate`: a bare Fastify route doing what the service's
 * validation does with the database, nothing else: the key's HMAC under the same derived key,
 * the same one statement on the (product_id, value_hash) unique index, the status arithmetic, and
 * the same JSON (validate `{ productId, key, instanceId? }` -> `{ valid, reason, license, instance }`,
 * 404 when no sold key matches). No rate limit, no schema library, no ORM.
 *
 * Env: FLOOR_DATABASE_URL, FLOOR_ENCRYPTION_KEY (base64, the service's APP_ENCRYPTION_KEY),
 * PORT (0 = any), FLOOR_POOL_MAX (10). Prints `{"msg":"floor listening on ...","port":N}`.
 */
import { createHmac, hkdfSync } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({
  connectionString: process.env.FLOOR_DATABASE_URL,
  max: Number(process.env.FLOOR_POOL_MAX ?? 10),
});
const master = Buffer.from(process.env.FLOOR_ENCRYPTION_KEY ?? '', 'base64');
const hashKey = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'svc:license-key-hash', 32));
const DAY_MS = 86_400_000;

// licenses.repo.ts lookupLicense, unlocked.
const LOOKUP = {
  name: 'license-lookup',
  text: `select k.id, k.product_id, k.livemode, k.status as key_status, k.assigned_at, k.disabled_at,
            p.license_activation_limit as activation_limit, p.license_validity_days as validity_days,
            (select count(*) from license_instance c where c.license_key_id = k.id)::int as usage,
            i.id as instance_id, i.name as instance_name, i.created_at as instance_created_at
       from license_key k
       join product p on p.id = k.product_id
       left join license_instance i on i.id = $1 and i.license_key_id = k.id
      where k.product_id = $2 and k.value_hash = $3 and k.order_id is not null and k.assigned_at is not null`,
};

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
  const { rows } = await pool.query({ ...LOOKUP, values: [body.instanceId ?? null, body.productId, valueHash] });
  const row = rows[0];
  if (!row) return reply.code(404).send({ error: 'No license with this key for this product.', code: 'not_found' });
  const now = Date.now();
  const expires = row.validity_days == null ? null : new Date(row.assigned_at.getTime() + row.validity_days * DAY_MS);
  const status =
    row.key_status === 'revoked' || row.disabled_at
      ? 'disabled'
      : expires && expires.getTime() <= now
        ? 'expired'
        : 'active';
  const instance = row.instance_id
    ? { id: row.instance_id, name: row.instance_name, createdAt: row.instance_created_at.toISOString() }
    : null;
  const reason =
    status !== 'active' ? status : body.instanceId !== undefined && !instance ? 'instance_not_found' : null;
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
      expiresAt: expires?.toISOString() ?? null,
      createdAt: row.assigned_at.toISOString(),
    },
    instance,
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
