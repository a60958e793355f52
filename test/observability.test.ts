/**
 * Black-box: what an operator sees of a running server. `/metrics` sees every route, not only
 * its own plugin's: after a merchant orders request, a theme checkout and a webhook attempt,
 * the Prometheus text holds the orders route's duration histogram under its documented template
 * (not the adapter's catch-all, not an id), the order count, and the webhook attempt and lag
 * figures. Request log lines carry the path the client sent, with secrets redacted, and the
 * start is free of deprecation warnings and says once where it listens. In production /metrics
 * is not public: it takes METRICS_TOKEN as a Bearer token, or moves to 127.0.0.1:METRICS_PORT,
 * or (with neither) answers 404.
 */
import { randomBytes } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { createThemeClient } from '@svc/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, importKeys } from './support/catalog.js';
import { pay, TEST_GATEWAY_SECRET } from './support/payments.js';
import {
  clientIp,
  createKeyFor,
  createStoreFor,
  dashboard,
  merchantGet,
  registerSeller,
  type Seller,
} from './support/seller.js';
import { startInProcess } from './support/in-process.js';
import { startServer, type LogLine } from './support/server.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

let server: Awaited<ReturnType<typeof startServer>>;
let receiver: WebhookReceiver;
let seller: Seller;
let store: { id: string; subdomain: string };

beforeAll(async () => {
  server = await startServer({ WEBHOOK_POLL_MS: '200', TEST_GATEWAY_SECRET });
  receiver = await startWebhookReceiver();
  seller = await registerSeller(server.url);
  store = await createStoreFor(seller);
});

afterAll(async () => {
  await receiver?.close();
  await server?.stop();
});

/** The value of the first sample line that starts with `prefix`. */
function sample(text: string, prefix: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('logs', () => {
  it(
    'log a REST request with the path the client sent, secrets in the query redacted',
    { timeout: 30_000 },
    async () => {
      const { key } = await createKeyFor(seller, { scopes: ['order:read'], storeIds: [store.id] });
      const path = `/api/merchant/v1/stores/${store.id}/orders?limit=5&api_key=sk_leaked`;
      expect((await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(400);
      const deadline = Date.now() + 5_000;
      const find = () =>
        server.logs.find(
          (line) =>
            line.msg === 'request completed' &&
            (line.req as { url?: string } | undefined)?.url?.startsWith(`/api/merchant/v1/stores/${store.id}/orders`),
        );
      while (!find() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      const line = find();
      expect((line?.req as { url: string }).url).toBe(
        `/api/merchant/v1/stores/${store.id}/orders?limit=5&api_key=[redacted]`,
      );
      await server.logsSettled();
      expect(server.output()).not.toContain('sk_leaked');
      expect(server.output()).not.toContain(key);
    },
  );

  it(
    "log neither the checkout token nor the buyer's e-mail of a theme client's order calls (tRPC GET input)",
    { timeout: 60_000 },
    async () => {
      // A store of its own: its orders reach no webhook of the /metrics test.
      const shop = await createStoreFor(seller, 'Log shop');
      const product = await createProduct(seller, shop.id, {
        name: 'Log key',
        price: 5,
        deliveryMethods: ['licenseKeys'],
      });
      await importKeys(seller, shop.id, product.id, [`LOG-${randomBytes(6).toString('hex')}`]);
      const theme = createThemeClient({ baseUrl: server.url, storeId: shop.id });
      const mailbox = `log-buyer-${randomBytes(6).toString('hex')}`;
      const email = `${mailbox}@example.test`;
      const { url, orderId } = await theme.checkout({ cart: [{ productId: product.id, quantity: 1 }], email });
      const token = new URL(url).searchParams.get('token')!;
      expect(token.length).toBeGreaterThan(20);
      expect((await pay(server.url, { orderId, amount: 5 })).status).toBe(200);

      // The theme client's reads go over GET /trpc with the input in the query string.
      for (const access of [
        { orderId, token },
        { orderId, email },
      ]) {
        expect((await theme.orders.keys(access)).keys).toHaveLength(1);
        expect((await theme.orders.delivery(access)).status).toBe('completed');
      }
      // A batch of both, as a tRPC client with batching sends it.
      const batch = encodeURIComponent(JSON.stringify({ '0': { orderId, token }, '1': { orderId, email } }));
      const batched = await fetch(`${server.url}/trpc/fulfilment.keys,fulfilment.delivery?batch=1&input=${batch}`);
      expect(batched.status).toBe(200);

      await server.logsSettled();
      const lines = server.logs.filter(
        (line) =>
          line.msg === 'request completed' && (line.req as { url?: string }).url?.startsWith('/trpc/fulfilment.'),
      );
      expect(lines).toHaveLength(5);
      for (const line of lines) expect((line.req as { url: string }).url).toContain('[redacted]');
      const output = server.output();
      for (const secret of [token, email, encodeURIComponent(email), mailbox]) expect(output).not.toContain(secret);
    },
  );

  it('start without deprecation warnings', async () => {
    await server.logsSettled();
    expect(server.output()).not.toMatch(/DeprecationWarning|FSTDEP/);
  });

  it('say once where the API listens, with its /docs', async () => {
    await server.logsSettled();
    const listening = server.logs.filter((line) => /listen/i.test(line.msg));
    expect(listening.map((line) => line.msg)).toEqual([
      `svc listening on ${server.url}; dashboard at http://localhost:${server.port}/dashboard/; API reference at http://localhost:${server.port}/docs`,
    ]);
    expect(server.output().match(/listening/gi)).toHaveLength(1);
  });
});

describe('/metrics', () => {
  it(
    'counts every route by template and status, and the orders, webhook attempts and webhook lag',
    { timeout: 60_000 },
    async () => {
      const hook = await dashboard(seller, 'POST', `/api/dashboard/stores/${store.id}/webhooks`, {
        name: 'metrics receiver',
        url: `${receiver.url}/hook`,
        events: ['order.created'],
      });
      expect(hook.status).toBe(201);
      const { key } = await createKeyFor(seller, { scopes: ['order:read'], storeIds: [store.id] });
      const product = await createProduct(seller, store.id, {
        deliveryMethods: ['deliveryInstructions'],
        deliveryInstructions: 'Thanks.',
      });

      expect((await merchantGet(server.url, key, `/stores/${store.id}/orders`)).status).toBe(200);
      const checkout = await fetch(`${server.url}/api/v1/checkout`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
        body: JSON.stringify({
          shopId: store.subdomain,
          cart: [{ productId: product.id, quantity: 1 }],
          email: 'buyer@example.test',
        }),
      });
      expect(checkout.status).toBe(200);
      await receiver.waitFor(1);

      // The attempt is recorded after the receiver answered: poll until the scrape shows it.
      let text = '';
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        text = await (await fetch(`${server.url}/metrics`)).text();
        if ((sample(text, 'svc_webhook_attempts_total{outcome="success"}') ?? 0) >= 1) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }

      const orders = '{method="GET",route="/api/merchant/v1/stores/{storeId}/orders",status="200"}';
      expect(sample(text, `http_request_duration_seconds_count${orders}`)).toBe(1);
      expect(text).toContain(
        `http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/api/merchant/v1/stores/{storeId}/orders",status="200"} 1`,
      );
      expect(sample(text, `http_requests_total${orders}`)).toBe(1);
      expect(sample(text, 'http_requests_total{method="POST",route="/api/v1/checkout",status="200"}')).toBe(1);
      // Routes outside the ops plugin and the adapter's catch-all are seen too; ids never become labels.
      expect(text).toContain('route="/api/auth/register"');
      expect(text).not.toContain(store.id);
      expect(text).not.toContain('route="/api/*"');

      expect(sample(text, 'svc_orders_created_total')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'svc_webhook_attempts_total{outcome="success"}')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'svc_webhook_lag_seconds_count')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'svc_webhook_lag_seconds_sum')).toBeGreaterThan(0);
      expect(sample(text, 'svc_webhook_due_attempts')).toBe(0);
      expect(sample(text, 'svc_db_pool_connections_in_use')).toBeGreaterThanOrEqual(0);
    },
  );

  it('counts rate-limit rejections by route', { timeout: 30_000 }, async () => {
    const ip = clientIp();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await fetch(`${server.url}/api/feedback/create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
        body: JSON.stringify({ orderId: 'nosuchorder', token: 'x'.repeat(43), rating: 5, text: 'great' }),
      });
      statuses.push(response.status);
    }
    expect(statuses.at(-1)).toBe(429);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(sample(text, 'svc_rate_limit_rejections_total{route="feedback.create"}')).toBe(1);
    expect(sample(text, 'http_requests_total{method="POST",route="/api/feedback/create",status="429"}')).toBe(1);
  });
});

describe('/metrics in production', () => {
  const TOKEN = `mt_${randomBytes(24).toString('base64url')}`;
  const production = { NODE_ENV: 'production', PUBLIC_URL: 'https://api.shop.example', SMTP_URL: 'smtp://127.0.0.1:9' };
  let withToken: Awaited<ReturnType<typeof startServer>>;
  let withPort: Awaited<ReturnType<typeof startServer>>;
  let withNeither: Awaited<ReturnType<typeof startServer>>;

  beforeAll(async () => {
    [withToken, withPort, withNeither] = await Promise.all([
      startServer({ ...production, METRICS_TOKEN: TOKEN }),
      startServer({ ...production, METRICS_PORT: '0' }),
      startServer(production),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([withToken?.stop(), withPort?.stop(), withNeither?.stop()]);
  });

  const listeningLine = (logs: LogLine[]) => logs.filter((line) => /listen/i.test(line.msg));

  it('with METRICS_TOKEN: 401 with WWW-Authenticate and our body without it or with a wrong one, 200 Prometheus text with it', async () => {
    const url = `${withToken.url}/metrics`;
    for (const authorization of [
      undefined,
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Basic ${TOKEN}`,
      TOKEN,
    ]) {
      const response = await fetch(url, { headers: authorization ? { authorization } : {} });
      expect(response.status, authorization).toBe(401);
      expect(response.headers.get('www-authenticate'), authorization).toMatch(/^Bearer realm="svc"/);
      expect(await response.json()).toEqual({ error: expect.any(String), code: 'unauthorized' });
    }
    const scraped = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await scraped.text()).toMatch(/^# HELP http_requests_total /m);
    // The token is a secret: the log never holds it.
    await withToken.logsSettled();
    expect(withToken.output()).not.toContain(TOKEN.slice(3));
  });

  it('with METRICS_PORT: served on that port of 127.0.0.1, and not on the API port', async () => {
    expect((await fetch(`${withPort.url}/metrics`)).status).toBe(404);
    const [line] = listeningLine(withPort.logs);
    const metricsUrl = line?.metricsUrl as string;
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const scraped = await fetch(metricsUrl);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(/^# TYPE http_requests_total counter$/m);
    // Nothing else there.
    expect((await fetch(metricsUrl.replace(/\/metrics$/, '/healthz'))).status).toBe(404);
    // Bound to loopback: another address of this machine does not answer on that port.
    const port = new URL(metricsUrl).port;
    const external = Object.values(networkInterfaces())
      .flat()
      .find((address) => address && address.family === 'IPv4' && !address.internal)?.address;
    if (external) await expect(fetch(`http://${external}:${port}/metrics`)).rejects.toThrow();
    // Still one line saying where it listens.
    expect(listeningLine(withPort.logs)).toHaveLength(1);
  });

  it('with neither: starts, and /metrics on the API port answers 404 in our body', async () => {
    const response = await fetch(`${withNeither.url}/metrics`);
    expect(response.status).toBe(404);
    expect((await response.json()).code).toBe('not_found');
    expect((await fetch(`${withNeither.url}/healthz`)).status).toBe(200);
  });
});

describe('/metrics outside production with METRICS_TOKEN', () => {
  it('takes the token too', async () => {
    const token = randomBytes(24).toString('hex');
    const app = await startInProcess({ env: { METRICS_TOKEN: token } });
    try {
      const without = await fetch(`${app.url}/metrics`);
      expect(without.status).toBe(401);
      expect(without.headers.get('www-authenticate')).toBe('Bearer realm="svc"');
      expect((await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});
