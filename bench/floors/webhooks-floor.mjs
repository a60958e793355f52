/**
 * Floor for outgoing webhook delivery: the least a sender can do to deliver the same events.
 * No ORM, no claim/lease, no retry bookkeeping, no endpoint failure streak: it reads the
 * store's `order.created` events from PostgreSQL once, queues one row per event in a plain
 * table of its own (`floor_delivery`, created by the bench; one `insert ... select`), then
 * POSTs each event's body, serialised exactly as the service's `eventBody` does and signed
 * with the service's own `signatureHeaders` (same headers), to the receiver, FLOOR_CONCURRENCY
 * (32) at once over a keep-alive agent, and records each outcome with one UPDATE through a
 * `pg` Pool of the service's size (10).
 *
 * Env: FLOOR_DATABASE_URL, FLOOR_STORE_ID, FLOOR_SECRET (the endpoint's `whsec_...` secret),
 * FLOOR_RECEIVER_URL, FLOOR_CONCURRENCY (32), FLOOR_POOL_MAX (10), FLOOR_TIMEOUT_MS (10000).
 * Prints one JSON line `{"msg":"floor done",...}` when every delivery is recorded, then
 * stays up (so its /proc figures can be read) until SIGTERM.
 */
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../apps/server/dist');
const { signatureHeaders } = await import(pathToFileURL(path.join(dist, 'modules/webhooks/signing.js')).href);

const secret = process.env.FLOOR_SECRET;
const receiver = new URL(process.env.FLOOR_RECEIVER_URL);
const concurrency = Number(process.env.FLOOR_CONCURRENCY ?? 32);
const timeoutMs = Number(process.env.FLOOR_TIMEOUT_MS ?? 10_000);
const pool = new pg.Pool({
  connectionString: process.env.FLOOR_DATABASE_URL,
  max: Number(process.env.FLOOR_POOL_MAX ?? 10),
});
const agent = new http.Agent({
  keepAlive: true,
  maxSockets: Math.max(64, concurrency),
  maxFreeSockets: Math.max(16, concurrency),
});
const wall = () => performance.timeOrigin + performance.now();
const say = (fields) => process.stdout.write(`${JSON.stringify({ time: Date.now(), ...fields })}\n`);

/** The service's eventBody (modules/webhooks/attempt.ts), verbatim: these exact bytes are signed. */
function eventBody(event) {
  return JSON.stringify({
    id: event.id,
    event: event.type,
    createdAt: event.createdAt.toISOString(),
    storeId: event.storeId,
    data: event.payload,
  });
}

function post(body, headers) {
  const started = performance.now();
  return new Promise((resolve) => {
    const payload = Buffer.from(body, 'utf8');
    const req = http.request(
      {
        method: 'POST',
        hostname: receiver.hostname,
        port: receiver.port,
        path: `${receiver.pathname}${receiver.search}`,
        headers: { ...headers, host: receiver.host, 'content-length': String(payload.length) },
        agent,
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            ok: res.statusCode >= 200 && res.statusCode < 300,
            statusCode: res.statusCode,
            preview: Buffer.concat(chunks).subarray(0, 1024).toString('utf8'),
            durationMs: Math.round(performance.now() - started),
          }),
        );
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`timed out after ${timeoutMs} ms`)));
    req.on('error', (error) =>
      resolve({
        ok: false,
        statusCode: null,
        preview: null,
        error: error.message,
        durationMs: Math.round(performance.now() - started),
      }),
    );
    req.end(payload);
  });
}

const startedAt = wall();
// Fan-out: one row per event, in one statement.
await pool.query(
  `insert into floor_delivery (id, event_id, status, created_at, updated_at)
   select 'fd_' || e.id, e.id, 'queued', now(), now() from event e where e.store_id = $1 and e.type = 'order.created'`,
  [process.env.FLOOR_STORE_ID],
);
const { rows } = await pool.query(
  `select d.id as delivery_id, e.id, e.store_id, e.type, e.payload, e.created_at
   from floor_delivery d join event e on e.id = d.event_id where d.status = 'queued' order by e.created_at, e.id`,
);
const readAt = wall();

let next = 0;
let succeeded = 0;
let failed = 0;
let firstSentAt;
async function lane() {
  for (let i = next++; i < rows.length; i = next++) {
    const row = rows[i];
    const body = eventBody({
      id: row.id,
      type: row.type,
      createdAt: row.created_at,
      storeId: row.store_id,
      payload: row.payload,
    });
    const headers = signatureHeaders(secret, {
      eventId: row.id,
      event: row.type,
      deliveryId: row.delivery_id,
      timestamp: Math.floor(Date.now() / 1000),
      body,
    });
    firstSentAt ??= wall();
    const result = await post(body, headers);
    await pool.query(
      `update floor_delivery set status = $1, response_code = $2, response_body_preview = $3, error_message = $4, duration_ms = $5, updated_at = $6 where id = $7`,
      [
        result.ok ? 'success' : 'failed',
        result.statusCode,
        result.preview,
        result.error ?? null,
        result.durationMs,
        new Date(),
        row.delivery_id,
      ],
    );
    if (result.ok) succeeded++;
    else failed++;
  }
}
await Promise.all(Array.from({ length: concurrency }, lane));
const doneAt = wall();
say({ msg: 'floor done', events: rows.length, succeeded, failed, startedAt, readAt, firstSentAt, doneAt, concurrency });

const keepAlive = setInterval(() => undefined, 1 << 30);
process.on('SIGTERM', () => {
  clearInterval(keepAlive);
  agent.destroy();
  void pool.end().finally(() => process.exit(0));
});
