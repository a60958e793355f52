/**
 * Shared pieces of the fault tests (test/faults-*.test.ts): a storefront seeded through the
 * real routes, the merchant webhook API, `svc worker` processes, a bounded mixed load that
 * records every answer, and small process probes (RSS, which process holds a socket).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { createProduct, importKeys } from './catalog.js';
import { signedNotification, notify } from './payments.js';
import { clientIp, createKeyFor, createStoreFor, registerSeller, type Seller } from './seller.js';
import { REPO_ROOT, SERVER_ENTRY, type LogLine } from './server.js';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a value other than undefined/false; throws after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 10_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: Error | undefined;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error instanceof Error ? error : new Error(String(error));
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(intervalMs);
  }
}

// ---------------------------------------------------------------------------------------------
// A shop

export interface Shop {
  baseUrl: string;
  seller: Seller;
  storeId: string;
  subdomain: string;
  /** A merchant API key with every scope. */
  apiKey: string;
  /** Delivered by license keys; price 5.00. */
  keyed: { id: string; priceMinor: number };
  /** Delivered by instructions (no stock); price 3.50. */
  instant: { id: string; priceMinor: number };
}

export async function seedShop(baseUrl: string, opts: { keys?: number } = {}): Promise<Shop> {
  const seller = await registerSeller(baseUrl);
  const store = await createStoreFor(seller);
  const apiKey = (
    await createKeyFor(seller, {
      scopes: ['order:read', 'order:update', 'webhook:read', 'webhook:write', 'webhook:delete'],
      storeIds: [store.id],
    })
  ).key;
  const keyed = await createProduct(seller, store.id, { name: 'Licence', price: 5, deliveryMethods: ['licenseKeys'] });
  const instant = await createProduct(seller, store.id, {
    name: 'Guide',
    price: 3.5,
    deliveryMethods: ['deliveryInstructions'],
    deliveryInstructions: 'Read it.',
  });
  const count = opts.keys ?? 0;
  if (count > 0) {
    const keys = Array.from({ length: count }, (_, i) => `KEY-${i}-${randomBytes(6).toString('hex')}`);
    const { added } = await importKeys(seller, store.id, keyed.id, keys);
    if (added !== count) throw new Error(`imported ${added} of ${count} keys`);
  }
  return {
    baseUrl,
    seller,
    storeId: store.id,
    subdomain: store.subdomain,
    apiKey,
    keyed: { id: keyed.id, priceMinor: 500 },
    instant: { id: instant.id, priceMinor: 350 },
  };
}

export function checkout(
  shop: Shop,
  cart: Array<{ productId: string; quantity: number }>,
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${shop.baseUrl}/api/v1/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ shopId: shop.storeId, cart, email: `buyer-${randomBytes(3).toString('hex')}@example.test` }),
    signal,
  });
}

export function merchant(
  shop: Shop,
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${shop.baseUrl}/api/merchant/v1/stores/${shop.storeId}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${shop.apiKey}`,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
}

export async function createWebhook(
  shop: Shop,
  url: string,
  events: string[],
  name = 'receiver',
): Promise<{ id: string; secret: string }> {
  const response = await merchant(shop, 'POST', '/webhooks', { name, url, events });
  if (response.status !== 201) throw new Error(`webhook create: ${response.status} ${await response.text()}`);
  const body = await response.json();
  return { id: body.id, secret: body.secret };
}

export interface Delivery {
  id: string;
  webhookId: string;
  eventId: string;
  event: string;
  attempt: number;
  status: 'pending' | 'success' | 'failed' | 'queued' | 'skipped';
  responseCode: number | null;
  responseBodyPreview: string | null;
  errorMessage: string | null;
  durationMs: number | null;
  createdAt: string;
}

/** The whole delivery log of an endpoint through the merchant API, oldest attempt first per event. */
export async function deliveryLog(shop: Shop, webhookId: string): Promise<Delivery[]> {
  const out: Delivery[] = [];
  let cursor: string | undefined;
  for (;;) {
    const response = await merchant(
      shop,
      'GET',
      `/webhooks/${webhookId}/deliveries?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    if (response.status !== 200) throw new Error(`deliveries: ${response.status} ${await response.text()}`);
    const page = await response.json();
    out.push(...page.deliveries);
    if (!page.hasMore) break;
    cursor = page.nextCursor;
  }
  return out.sort((a, b) => a.eventId.localeCompare(b.eventId) || a.attempt - b.attempt);
}

// ---------------------------------------------------------------------------------------------
// svc worker

export interface RunningWorker {
  process: ChildProcess;
  logs: LogLine[];
  output: () => string;
  /** SIGTERM and wait for exit. */
  stop(): Promise<number | null>;
  kill(): Promise<void>;
}

/** Spawns `svc worker` and resolves once it says it is delivering. */
export async function spawnWorker(env: Record<string, string | undefined>): Promise<RunningWorker> {
  const merged: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    ...env,
  };
  const childEnv = Object.fromEntries(
    Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const child = spawn(process.execPath, [SERVER_ENTRY, 'worker'], {
    cwd: REPO_ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: LogLine[] = [];
  let text = '';
  let buffer = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      buffer += chunk.toString();
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        try {
          const parsed = JSON.parse(line) as LogLine;
          logs.push(parsed);
          if (parsed.msg === 'svc worker delivering webhooks') resolve();
        } catch {
          // not a log line
        }
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
    void exited.then((code) => reject(new Error(`worker exited (${code}) before it started:\n${text}`)));
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  await ready.finally(() => clearTimeout(timer));
  return {
    process: child,
    logs,
    output: () => text,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** SIGKILLs a child (if it still runs) and waits for it to go. */
export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

// ---------------------------------------------------------------------------------------------
// Process probes (Linux /proc)

/** Resident set size of a process, in KiB. */
export function rssKiB(pid: number): number {
  const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for ${pid}`);
  return Number(match[1]);
}

/**
 * Which of `pids` owns the TCP socket whose local port is `localPort` (the client side of a
 * connection a receiver saw coming from that port): the socket's inode from /proc/net/tcp,
 * then the process whose fd table links to it. Undefined when none does.
 */
export function socketOwner(localPort: number, pids: number[]): number | undefined {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const port = parseInt(fields[1]!.split(':')[1]!, 16);
      if (port === localPort) inodes.add(fields[9]!);
    }
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode && inodes.has(inode)) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Bounded mixed load

export interface Sample {
  kind: string;
  startedAt: number;
  endedAt: number;
  /** HTTP status, or 0 when no answer came (connection error, timeout). */
  status: number;
  body: unknown;
  error?: string;
}

export interface PlacedOrder {
  orderId: string;
  cart: Array<{ productId: string; quantity: number }>;
  amountMinor: number;
}

export interface SentNotification {
  orderId: string;
  amountMinor: number;
  /** The notification's JSON body (its id makes it idempotent); re-signed when sent again. */
  body: string;
  status: number;
  outcome: string | undefined;
}

export interface Load {
  samples: Sample[];
  orders: PlacedOrder[];
  notifications: SentNotification[];
  /** Stops the clients and waits for the requests in flight. */
  stop(): Promise<void>;
}

/** Re-signs a notification body (fresh timestamp) and sends it. */
export async function resend(baseUrl: string, body: string): Promise<Response> {
  const parsed = JSON.parse(body) as {
    id: string;
    type: 'payment.succeeded';
    orderId: string;
    amount: number;
    currency: string;
  };
  return notify(
    baseUrl,
    signedNotification({
      id: parsed.id,
      type: parsed.type,
      orderId: parsed.orderId,
      amount: parsed.amount,
      currency: parsed.currency,
    }),
  );
}

/**
 * `clients` loops, each pausing `pauseMs` between requests (tens of requests per second in
 * all): theme checkouts, settlements of the orders placed (through the test gateway), merchant
 * reads, catalog reads. Every answer is kept with its time.
 */
export function startLoad(shop: Shop, opts: { clients?: number; pauseMs?: number; timeoutMs?: number } = {}): Load {
  const samples: Sample[] = [];
  const orders: PlacedOrder[] = [];
  const unpaid: PlacedOrder[] = [];
  const notifications: SentNotification[] = [];
  let running = true;
  const timeoutMs = opts.timeoutMs ?? 8_000;

  async function record(kind: string, run: (signal: AbortSignal) => Promise<Response>): Promise<Sample> {
    const startedAt = Date.now();
    let sample: Sample;
    try {
      const response = await run(AbortSignal.timeout(timeoutMs));
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON; kept as text
      }
      sample = { kind, startedAt, endedAt: Date.now(), status: response.status, body };
    } catch (error) {
      sample = { kind, startedAt, endedAt: Date.now(), status: 0, body: undefined, error: String(error) };
    }
    samples.push(sample);
    return sample;
  }

  const carts = [
    [{ productId: shop.keyed.id, quantity: 1 }],
    [
      { productId: shop.keyed.id, quantity: 2 },
      { productId: shop.instant.id, quantity: 1 },
    ],
    [{ productId: shop.instant.id, quantity: 2 }],
  ];
  const priceOf = (cart: PlacedOrder['cart']) =>
    cart.reduce(
      (sum, line) =>
        sum + line.quantity * (line.productId === shop.keyed.id ? shop.keyed.priceMinor : shop.instant.priceMinor),
      0,
    );

  async function step(): Promise<void> {
    const roll = Math.random();
    if (roll < 0.3) {
      const cart = carts[Math.floor(Math.random() * carts.length)]!;
      const sample = await record('checkout', (signal) => checkout(shop, cart, signal));
      const orderId = (sample.body as { orderId?: string } | undefined)?.orderId;
      if (sample.status === 200 && orderId) {
        const placed = { orderId, cart, amountMinor: priceOf(cart) };
        orders.push(placed);
        unpaid.push(placed);
      }
    } else if (roll < 0.55 && unpaid.length > 0) {
      const order = unpaid.shift()!;
      const signed = signedNotification({ orderId: order.orderId, amount: order.amountMinor / 100 });
      const sample = await record('settle', (signal) =>
        fetch(`${shop.baseUrl}/api/payments/test/webhook`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-test-signature': signed.signature },
          body: signed.body,
          signal,
        }),
      );
      notifications.push({
        orderId: order.orderId,
        amountMinor: order.amountMinor,
        body: signed.body,
        status: sample.status,
        outcome: (sample.body as { outcome?: string } | undefined)?.outcome,
      });
    } else if (roll < 0.75) {
      const known = orders[Math.floor(Math.random() * orders.length)];
      if (known && Math.random() < 0.5)
        await record('merchant.order', (signal) =>
          merchant(shop, 'GET', `/orders/${known.orderId}`, undefined, signal),
        );
      else await record('merchant.orders', (signal) => merchant(shop, 'GET', '/orders?limit=20', undefined, signal));
    } else if (Math.random() < 0.5) {
      await record('catalog.products', (signal) =>
        fetch(`${shop.baseUrl}/api/stores/by-subdomain/${shop.subdomain}/products`, { signal }),
      );
    } else {
      await record('catalog.store', (signal) => fetch(`${shop.baseUrl}/api/store/${shop.subdomain}`, { signal }));
    }
  }

  const pauseMs = opts.pauseMs ?? 150;
  const loops = Array.from({ length: opts.clients ?? 5 }, async () => {
    while (running) {
      await step();
      await sleep(pauseMs * (0.5 + Math.random()));
    }
  });
  return {
    samples,
    orders,
    notifications,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** `kind status` counts, for failure messages. */
export function tally(samples: Sample[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) {
    const key = `${s.kind} ${s.status}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}
