/**
 * @svc/sdk as a consumer gets it: `npm pack` of the built package (no rebuild here: `npm test`
 * builds first), installed offline from the tarball into throw-away projects outside the repo,
 * then used from an ESM script, a CommonJS script, a TypeScript project per module resolution
 * (node16 and bundler, strict, `skipLibCheck: false`, no @types/node) and an esbuild bundle,
 * through `@svc/sdk` and its subpaths (`/theme`, `/webhooks`, `/licenses`). Also what the
 * tarball and the installed tree hold (LICENSE, a README that stands alone), that the
 * declarations name no other package, and that `npm publish --dry-run` has nothing to warn about.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SDK_DIR = path.join(REPO, 'packages/sdk');
const TSC = path.join(REPO, 'node_modules/typescript/bin/tsc');
const ESBUILD = path.join(REPO, 'node_modules/.bin/esbuild');

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The child's environment: ours without the npm_* variables `npm test` sets (they carry the repo's prefix and config). */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) || key === 'INIT_CWD' || key === 'NODE_OPTIONS') continue;
    env[key] = value;
  }
  return env;
}

function run(command: string, args: string[], cwd: string): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env: childEnv(), maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) || (error?.message ?? '') });
    });
  });
}

/** Fails with the child's output, so a broken step says why. */
function ok(result: RunResult, what: string): RunResult {
  // The tail: tsc prints its diagnostics after any --traceResolution output.
  if (result.code !== 0)
    throw new Error(
      `${what} exited with ${result.code}\n--- stdout\n${result.stdout.slice(-6000)}\n--- stderr\n${result.stderr.slice(-6000)}`,
    );
  return result;
}

/** A local port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  return port;
}

// ---------------------------------------------------------------------------------------------
// The consumers' code

const JS_NAMES = [
  'createMerchantClient',
  'createThemeClient',
  'createCustomerClient',
  'createLicenseClient',
  'verifySignature',
  'constructEvent',
  'generateTestHeader',
  'isSvcError',
  'SvcError',
  'SvcApiError',
  'SvcConnectionError',
  'SvcNotFoundError',
  'WebhookVerificationError',
  'DEFAULT_WEBHOOK_TOLERANCE_SECONDS',
];

/** The checks both JavaScript consumers run, with the names above in scope and the closed port in argv[2]. */
const JS_CHECKS = `
async function outcome(promise) {
  try {
    const value = await promise;
    return { ok: true, value };
  } catch (error) {
    return {
      ok: false,
      name: error?.name,
      code: error?.code,
      type: error?.type,
      procedure: error?.procedure,
      isSvcError: isSvcError(error),
      svcError: error instanceof SvcError,
      apiError: error instanceof SvcApiError,
      connectionError: error instanceof SvcConnectionError,
      notFoundError: error instanceof SvcNotFoundError,
      webhookError: error instanceof WebhookVerificationError,
    };
  }
}

async function checks(port) {
  const secret = 'whsec_' + Buffer.from('svc-sdk package test: a 32-byte key').toString('base64');
  const body = JSON.stringify({ id: 'evt_pkg_1', event: 'webhook.test', createdAt: '2026-11-21T12:00:00.000Z', storeId: 'store_pkg', data: { webhookId: 'wh_pkg', note: 'Ключ 🔑' } });
  const headers = await generateTestHeader({ payload: body, secret });
  const standardOnly = { 'webhook-id': headers['webhook-id'], 'webhook-timestamp': headers['webhook-timestamp'], 'webhook-signature': headers['webhook-signature'] };
  const client = createMerchantClient({ baseUrl: 'http://127.0.0.1:' + port, apiKey: 'sk_' + 'a1'.repeat(12), maxRetries: 0, timeoutMs: 5000 });
  const started = Date.now();
  const connection = await outcome(client.orders.list({ storeId: 'store_pkg', status: 'paid' }));
  return {
    tolerance: DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
    headerNames: Object.keys(headers).sort(),
    verified: await outcome(verifySignature(body, headers, secret)),
    standardOnly: await outcome(verifySignature(body, standardOnly, secret)),
    fetchHeadersAndBytes: await outcome(verifySignature(new TextEncoder().encode(body), new Headers(headers), secret)),
    event: await outcome(constructEvent(body, headers, secret)),
    changedBody: await outcome(verifySignature(body.replace('wh_pkg', 'wh_evil'), headers, secret)),
    otherSecret: await outcome(verifySignature(body, headers, 'whsec_' + Buffer.from('another key').toString('base64'))),
    connection,
    connectionMs: Date.now() - started,
    otherClients: {
      theme: typeof createThemeClient({ baseUrl: 'http://127.0.0.1:' + port, storeId: 'store_pkg', subdomain: 'pkg' }).storefront,
      customer: typeof createCustomerClient({ baseUrl: 'http://127.0.0.1:' + port, storeId: 'store_pkg' }).orders.list,
    },
  };
}
`;

/**
 * What each subpath exports, and that it is the same code as the root's: a client made from a
 * subpath throws errors the root's classes recognise (one copy of each class per module system).
 */
const SUBPATH_CHECKS = `
async function subpathChecks({ sdk, theme, webhooks, licenses }, port) {
  const baseUrl = 'http://127.0.0.1:' + port;
  const thrown = async (promise) => promise.then(() => null, (error) => ({
    rootSvcError: error instanceof sdk.SvcError,
    rootConnectionError: error instanceof sdk.SvcConnectionError,
    code: error.code,
  }));
  const secret = 'whsec_' + Buffer.from('svc-sdk subpath test: a 32-byte key').toString('base64');
  const body = JSON.stringify({ id: 'evt_sub_1', event: 'webhook.test', createdAt: '2026-11-21T12:00:00.000Z', storeId: 'store_sub', data: { webhookId: 'wh_sub' } });
  const headers = await webhooks.generateTestHeader({ payload: body, secret });
  let mismatch;
  try {
    await webhooks.verifySignature(body + ' ', headers, secret);
  } catch (error) {
    mismatch = { code: error.code, rootWebhookError: error instanceof sdk.WebhookVerificationError, rootSvcError: error instanceof sdk.SvcError };
  }
  return {
    names: {
      theme: Object.keys(theme).sort(),
      webhooks: Object.keys(webhooks).sort(),
      licenses: Object.keys(licenses).sort(),
    },
    sameFunctions: theme.createThemeClient === sdk.createThemeClient && licenses.createLicenseClient === sdk.createLicenseClient && webhooks.verifySignature === sdk.verifySignature,
    themeError: await thrown(theme.createThemeClient({ baseUrl, storeId: 'store_sub', maxRetries: 0 }).cart.get([{ productId: 'p', quantity: 1 }])),
    licenseError: await thrown(licenses.createLicenseClient({ baseUrl, productId: 'prod_sub', maxRetries: 0 }).validate('KEY')),
    event: (await webhooks.constructEvent(body, headers, secret)).data,
    mismatch,
  };
}
`;

const ESM_SCRIPT = `import { ${JS_NAMES.join(', ')} } from '@svc/sdk';
import * as sdk from '@svc/sdk';
import * as theme from '@svc/sdk/theme';
import * as webhooks from '@svc/sdk/webhooks';
import * as licenses from '@svc/sdk/licenses';
${JS_CHECKS}
${SUBPATH_CHECKS}
const result = await checks(Number(process.argv[2]));
result.resolved = fileURLToPathLike(import.meta.resolve('@svc/sdk'));
result.exportNames = Object.keys(sdk).sort();
result.subpaths = await subpathChecks({ sdk, theme, webhooks, licenses }, Number(process.argv[2]));
result.subpaths.resolved = ['theme', 'webhooks', 'licenses'].map((name) => fileURLToPathLike(import.meta.resolve('@svc/sdk/' + name)));
process.stdout.write(JSON.stringify(result));

function fileURLToPathLike(url) {
  return decodeURIComponent(new URL(url).pathname);
}
`;

const CJS_SCRIPT = `'use strict';
const { ${JS_NAMES.join(', ')} } = require('@svc/sdk');
${JS_CHECKS}
${SUBPATH_CHECKS}
(async () => {
  const port = Number(process.argv[2]);
  const result = await checks(port);
  result.resolved = require.resolve('@svc/sdk');
  result.exportNames = Object.keys(require('@svc/sdk')).sort();
  const entries = { sdk: require('@svc/sdk'), theme: require('@svc/sdk/theme'), webhooks: require('@svc/sdk/webhooks'), licenses: require('@svc/sdk/licenses') };
  result.subpaths = await subpathChecks(entries, port);
  result.subpaths.resolved = ['theme', 'webhooks', 'licenses'].map((name) => require.resolve('@svc/sdk/' + name));
  // The ESM build loaded beside this one: a second copy of every class.
  const esm = await import('@svc/sdk');
  let crossCopy;
  try {
    await esm.createMerchantClient({ baseUrl: 'http://127.0.0.1:' + port, apiKey: 'sk_' + 'b2'.repeat(12), maxRetries: 0 }).orders.get({ storeId: 's', orderId: 'o' });
    crossCopy = { ok: true };
  } catch (error) {
    crossCopy = { ok: false, distinctCopies: esm.SvcError !== SvcError, isSvcError: isSvcError(error), instanceOfThisCopy: error instanceof SvcError, type: error.type };
  }
  result.crossCopy = crossCopy;
  process.stdout.write(JSON.stringify(result));
})().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
`;

/**
 * A TypeScript consumer, compiled as ESM (.ts), as CommonJS (.cts) and for bundlers. No
 * @types/node (types: []), so the declarations must not lean on Node's; `process` is declared
 * here for the closed port only.
 */
const TS_SOURCE = `import {
  constructEvent,
  createCustomerClient,
  createLicenseClient,
  createMerchantClient,
  createThemeClient,
  generateTestHeader,
  isSvcError,
  SvcApiError,
  SvcConnectionError,
  SvcError,
  verifySignature,
  WebhookVerificationError,
  type CustomerClient,
  type LicenseClient,
  type MerchantClient,
  type OrderDetail,
  type OrderStatus,
  type SvcErrorType,
  type ThemeClient,
  type VerifiedWebhook,
  type WebhookEvent,
  type WebhookVerificationErrorCode,
} from '@svc/sdk';

declare const process: { argv: string[]; exitCode?: number };

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type OrderPage = Awaited<ReturnType<MerchantClient['orders']['list']>>;
type ListInput = Parameters<MerchantClient['orders']['list']>[0];
type Cart = Awaited<ReturnType<ThemeClient['cart']['get']>>;
type CustomerOrders = Awaited<ReturnType<CustomerClient['orders']['list']>>;
type Validation = Awaited<ReturnType<LicenseClient['validate']>>;

// Each must be true, or this file does not compile.
export const typeFacts: [
  Equal<OrderPage['orders'][number]['status'], OrderStatus>,
  Equal<OrderPage['nextCursor'], string | null>,
  Equal<ListInput['status'], OrderStatus | undefined>,
  Equal<ReturnType<MerchantClient['orders']['get']>, Promise<Awaited<ReturnType<MerchantClient['orders']['get']>>>>,
  Equal<VerifiedWebhook['scheme'], 'service' | 'standard'>,
  Equal<WebhookVerificationError['code'], WebhookVerificationErrorCode>,
  Equal<Extract<WebhookEvent, { event: 'order.paid' }>['data']['order'], OrderDetail>,
  Equal<Validation['valid'], boolean>,
] = [true, true, true, true, true, true, true, true];

export async function neverCalled(
  client: MerchantClient,
  theme: ThemeClient,
  customer: CustomerClient,
  licenses: LicenseClient,
): Promise<number> {
  const page: OrderPage = await client.orders.list({ storeId: 's1', status: 'paid', limit: 10 });
  const first: OrderStatus | undefined = page.orders[0]?.status;
  // @ts-expect-error -- orders.list takes no \`sort\`
  await client.orders.list({ storeId: 's1', sort: 'asc' });
  // @ts-expect-error -- 'shipped' is not an order status
  await client.orders.list({ storeId: 's1', status: 'shipped' });
  // @ts-expect-error -- storeId is required
  await client.orders.list({ status: 'paid' });
  // @ts-expect-error -- limit is a number
  await client.orders.list({ storeId: 's1', limit: '10' });
  // @ts-expect-error -- orders.update takes a note, not a status
  await client.orders.update({ storeId: 's1', orderId: 'o1', status: 'completed' });
  // @ts-expect-error -- the cart lines need a quantity
  await theme.cart.get([{ productId: 'p1' }]);
  const cart: Cart = await theme.cart.get([{ productId: 'p1', quantity: 1 }]);
  const mine: CustomerOrders = await customer.orders.list();
  // @ts-expect-error -- an activation names the instance
  await licenses.activate('KEY-1');
  const { instance } = await licenses.activate('KEY-1', 'laptop');
  const validation: Validation = await licenses.validate('KEY-1', instance.id);
  if (!validation.valid) return 0;
  for await (const order of client.orders.iterate({ storeId: 's1' })) return order.keyCount + (first ? 1 : 0);
  return cart.subtotal + mine.orders.length;
}

/** Narrowing on \`event\`: each branch sees its own \`data\`. */
export function describeEvent(event: WebhookEvent): string {
  switch (event.event) {
    case 'order.paid':
    case 'order.completed':
      return \`\${event.event} \${event.data.order.orderId} \${event.data.order.customFieldResponses.length}\`;
    case 'product.updated':
      return \`\${event.event} \${event.data.product.status}\`;
    case 'webhook.test':
      // @ts-expect-error -- a test event carries no order
      void event.data.order;
      return \`\${event.event} \${event.data.webhookId}\`;
    default:
      return event.event;
  }
}

function failure(error: unknown): { ok: false; name: string; code: string; type: SvcErrorType | null; isSvcError: boolean; svcError: boolean; apiError: boolean; connectionError: boolean; webhookError: boolean } {
  if (!(error instanceof SvcError)) throw error;
  return {
    ok: false,
    name: error.name,
    code: error.code,
    type: error instanceof SvcApiError ? error.type : null,
    isSvcError: isSvcError(error),
    svcError: true,
    apiError: error instanceof SvcApiError,
    connectionError: error instanceof SvcConnectionError,
    webhookError: error instanceof WebhookVerificationError,
  };
}

async function main(): Promise<void> {
  const port = Number(process.argv[2]);
  const secret = 'whsec_' + btoa('svc-sdk typescript consumer key!');
  const body = JSON.stringify({ id: 'evt_ts_1', event: 'order.paid', createdAt: '2026-11-21T12:00:00.000Z', storeId: 'store_ts', data: { order: { orderId: 'ORD-7', customFieldResponses: [] } } });
  const headers = await generateTestHeader({ payload: body, secret, timestamp: 1_790_000_000 });
  const verified: VerifiedWebhook = await verifySignature(body, headers, secret, { now: new Date(1_790_000_100_000) });
  const event = await constructEvent(body, headers, secret, { now: new Date(1_790_000_100_000) });
  const changedBody = await verifySignature(body.replace('ORD-7', 'ORD-8'), headers, secret, { now: new Date(1_790_000_100_000) }).then(() => ({ ok: true }), failure);
  const stale = await verifySignature(body, headers, secret, { now: new Date(1_790_000_301_000) }).then(() => ({ ok: true }), failure);
  const client = createMerchantClient({ baseUrl: \`http://127.0.0.1:\${port}\`, apiKey: 'sk_' + 'c3'.repeat(12), maxRetries: 0, timeoutMs: 5000 });
  const connection = await client.orders.list({ storeId: 'store_ts' }).then(() => ({ ok: true }), failure);
  createThemeClient({ baseUrl: \`http://127.0.0.1:\${port}\`, storeId: 'store_ts' });
  createCustomerClient({ baseUrl: \`http://127.0.0.1:\${port}\`, storeId: 'store_ts' });
  const licenses = createLicenseClient({ baseUrl: \`http://127.0.0.1:\${port}\`, productId: 'prod_ts', maxRetries: 0, timeoutMs: 5000 });
  const license = await licenses.validate('KEY-TS').then(() => ({ ok: true }), failure);
  console.log(JSON.stringify({ scheme: verified.scheme, timestamp: verified.timestamp, described: describeEvent(event), changedBody, stale, connection, license, typeFacts }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
`;

/**
 * A TypeScript consumer of the subpaths, beside TS_SOURCE in the same projects: each entry's
 * names and types, the same types as the root's, and nothing of the other clients.
 */
const TS_SUBPATHS = `import { createThemeClient, isSvcError, SvcApiError, type Cart, type ThemeClient } from '@svc/sdk/theme';
import {
  constructEvent,
  generateTestHeader,
  WebhookVerificationError,
  type OrderDetail,
  type WebhookEvent,
} from '@svc/sdk/webhooks';
import { createLicenseClient, SvcConflictError, type LicenseClient, type LicenseValidation } from '@svc/sdk/licenses';
import type * as Root from '@svc/sdk';
// @ts-expect-error -- the theme entry carries no merchant client
import { createMerchantClient } from '@svc/sdk/theme';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

export const subpathFacts: [
  Equal<Extract<WebhookEvent, { event: 'order.paid' }>['data']['order'], OrderDetail>,
  Equal<LicenseValidation['valid'], boolean>,
  Equal<Cart['subtotal'], number>,
  Equal<ThemeClient, Root.ThemeClient>,
  Equal<LicenseClient, Root.LicenseClient>,
  Equal<WebhookEvent, Root.WebhookEvent>,
] = [true, true, true, true, true, true];

export async function fromSubpaths(): Promise<string> {
  const shop = createThemeClient({ baseUrl: 'https://svc.example', subdomain: 'acme' });
  const licenses = createLicenseClient({ baseUrl: 'https://svc.example', productId: 'prod_1' });
  const secret = 'whsec_' + btoa('svc-sdk typescript consumer key!');
  const body = JSON.stringify({ id: 'evt_1', event: 'webhook.test', createdAt: '2026-11-21T12:00:00.000Z', storeId: 's', data: { webhookId: 'wh_1' } });
  try {
    const event = await constructEvent(body, await generateTestHeader({ payload: body, secret }), secret);
    const cart: Cart = await shop.cart.get([{ productId: 'p1', quantity: 1 }]);
    const { valid } = await licenses.validate('KEY-1');
    return \`\${event.event} \${cart.subtotal} \${valid} \${typeof createMerchantClient}\`;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.code;
    if (error instanceof SvcConflictError) return error.code;
    if (error instanceof SvcApiError) return error.type;
    return isSvcError(error) ? error.code : 'unknown';
  }
}
`;

/**
 * The events API read back with narrowing: \`events.iterate\` yields events whose \`data\` narrows on
 * \`event\`, as a delivered webhook's does, with no cast.
 */
const TS_EVENTS = `import { createMerchantClient, type WebhookEvent } from '@svc/sdk';

export async function catchUp(storeId: string, handle: (event: WebhookEvent) => void): Promise<string[]> {
  const svc = createMerchantClient({ baseUrl: 'https://svc.example', apiKey: 'sk_test' });
  const seen: string[] = [];
  for await (const event of svc.events.iterate({ storeId })) {
    switch (event.event) {
      case 'order.paid':
      case 'order.refunded':
        seen.push(\`\${event.data.order.orderId} \${event.data.order.status}\`);
        break;
      case 'product.updated':
        seen.push(event.data.product.status);
        break;
      case 'license.disabled':
        seen.push(event.data.license.masked);
        break;
      case 'webhook.test':
        // @ts-expect-error -- a test event carries no order
        void event.data.order;
        seen.push(event.data.webhookId);
        break;
      default:
        seen.push(event.event);
    }
    handle(event); // an event read back is handled as a delivered one
  }
  return seen;
}
`;

function tsconfig(compilerOptions: Record<string, unknown>, include: string[]): string {
  return JSON.stringify(
    {
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2022', 'DOM'],
        types: [],
        strict: true,
        noUncheckedIndexedAccess: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: false,
        isolatedModules: true,
        ...compilerOptions,
      },
      include,
    },
    null,
    2,
  );
}

// ---------------------------------------------------------------------------------------------
// Packing and installing

interface PackResult {
  filename: string;
  files: Array<{ path: string }>;
}

/** The package's entry points (dist/<name>.*) and the files each has. */
const ENTRIES = ['index', 'theme', 'webhooks', 'licenses'];
const ENTRY_FILES = ['.js', '.cjs', '.d.ts', '.d.cts'];

let work: string;
let tarball: string;
let packStderr: string;
let packed: PackResult;
let port: number;
const consumers = {
  esm: '',
  cjs: '',
  node16: '',
  bundler: '',
  events: '',
};

async function consumer(
  name: keyof typeof consumers,
  packageJson: Record<string, unknown>,
  files: Record<string, string>,
): Promise<void> {
  const dir = path.join(work, name);
  await mkdir(dir);
  await writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: `svc-sdk-consumer-${name}`, version: '0.0.0', private: true, ...packageJson }, null, 2),
  );
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  ok(
    await run('npm', ['install', '--no-audit', '--no-fund', '--offline', '--ignore-scripts', tarball], dir),
    `npm install (${name})`,
  );
  consumers[name] = dir;
}

beforeAll(async () => {
  for (const file of ENTRIES.flatMap((entry) => ENTRY_FILES.map((extension) => entry + extension))) {
    if (!existsSync(path.join(SDK_DIR, 'dist', file)))
      throw new Error(`packages/sdk/dist/${file} is missing: build first (npm run build).`);
  }
  work = await mkdtemp(path.join(tmpdir(), 'svc-sdk-package-'));
  const pack = ok(
    await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], SDK_DIR),
    'npm pack',
  );
  const results = JSON.parse(pack.stdout) as PackResult[];
  expect(results).toHaveLength(1);
  packed = results[0]!;
  packStderr = pack.stderr;
  tarball = path.join(work, packed.filename);
  port = await closedPort();

  await Promise.all([
    consumer('esm', { type: 'module' }, { 'main.js': ESM_SCRIPT }),
    consumer('cjs', {}, { 'main.cjs': CJS_SCRIPT }),
    consumer(
      'node16',
      { type: 'module' },
      {
        'tsconfig.json': tsconfig({ module: 'node16', moduleResolution: 'node16', outDir: 'out', rootDir: 'src' }, [
          'src',
        ]),
        'src/esm.ts': TS_SOURCE,
        'src/cjs.cts': TS_SOURCE,
        'src/subpaths.ts': TS_SUBPATHS,
        'src/subpaths-cjs.cts': TS_SUBPATHS,
      },
    ),
    consumer(
      'bundler',
      { type: 'module' },
      {
        'tsconfig.json': tsconfig({ module: 'esnext', moduleResolution: 'bundler', noEmit: true }, ['src']),
        'src/main.ts': TS_SOURCE,
        'src/subpaths.ts': TS_SUBPATHS,
      },
    ),
    consumer(
      'events',
      { type: 'module' },
      {
        'tsconfig.json': tsconfig({ module: 'node16', moduleResolution: 'node16', noEmit: true }, ['src']),
        'src/events.ts': TS_EVENTS,
      },
    ),
  ]);
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------

/** What the JavaScript consumers print. */
interface JsReport {
  tolerance: number;
  headerNames: string[];
  verified: { ok: boolean; value?: { scheme: string; timestamp: number } };
  standardOnly: { ok: boolean; value?: { scheme: string } };
  fetchHeadersAndBytes: { ok: boolean; value?: { scheme: string } };
  event: { ok: boolean; value?: { id: string; event: string; data: { webhookId: string; note: string } } };
  changedBody: Record<string, unknown>;
  otherSecret: Record<string, unknown>;
  connection: Record<string, unknown>;
  connectionMs: number;
  otherClients: { theme: string; customer: string };
  resolved: string;
  exportNames: string[];
  subpaths: Record<string, unknown> & { resolved: string[] };
  crossCopy?: Record<string, unknown>;
}

const ERROR_EXPORTS = [
  'SvcApiError',
  'SvcAuthenticationError',
  'SvcConflictError',
  'SvcConnectionError',
  'SvcError',
  'SvcIdempotencyError',
  'SvcInvalidRequestError',
  'SvcNotFoundError',
  'SvcPermissionError',
  'SvcRateLimitError',
  'isSvcError',
];

/** What each subpath exports at run time: one client (or verification) and the errors it throws. */
const SUBPATH_NAMES = {
  theme: [
    ...ERROR_EXPORTS,
    'cartTaxLine',
    'createThemeClient',
    'formatPrice',
    'planLabel',
    'planPriceText',
    'trialText',
    'yearlySaving',
  ].sort(),
  licenses: [
    ...ERROR_EXPORTS,
    'createLicenseClient',
    'verifyLicenseLease',
    'fetchJwks',
    'LeaseInvalidError',
    'LEASE_TYP',
  ].sort(),
  webhooks: [
    'DEFAULT_WEBHOOK_TOLERANCE_SECONDS',
    'SERVICE_SIGNATURE_HEADER',
    'STANDARD_ID_HEADER',
    'STANDARD_SIGNATURE_HEADER',
    'STANDARD_TIMESTAMP_HEADER',
    'SvcError',
    'WEBHOOK_SECRET_PREFIX',
    'WebhookVerificationError',
    'constructEvent',
    'generateTestHeader',
    'isSvcError',
    'verifySignature',
  ],
};

const EXPORT_NAMES = [
  'DEFAULT_WEBHOOK_TOLERANCE_SECONDS',
  'ERROR_CODES',
  'LEASE_TYP',
  'LeaseInvalidError',
  'SERVICE_SIGNATURE_HEADER',
  'STANDARD_ID_HEADER',
  'STANDARD_SIGNATURE_HEADER',
  'STANDARD_TIMESTAMP_HEADER',
  'SvcApiError',
  'SvcAuthenticationError',
  'SvcConflictError',
  'SvcConnectionError',
  'SvcError',
  'SvcIdempotencyError',
  'SvcInvalidRequestError',
  'SvcNotFoundError',
  'SvcPermissionError',
  'SvcRateLimitError',
  'WEBHOOK_SECRET_PREFIX',
  'WebhookVerificationError',
  'cartTaxLine',
  'constructEvent',
  'createCustomerClient',
  'createLicenseClient',
  'createMerchantClient',
  'createThemeClient',
  'fetchJwks',
  'formatPrice',
  'generateTestHeader',
  'isSvcError',
  'planLabel',
  'planPriceText',
  'trialText',
  'verifyLicenseLease',
  'verifySignature',
  'yearlySaving',
];

function expectJsReport(report: JsReport, dir: string, entry: string): void {
  expect(report.resolved).toBe(path.join(dir, 'node_modules/@svc/sdk/dist', entry));
  expect(report.exportNames).toEqual(EXPORT_NAMES);
  const extension = path.extname(entry);
  const clientFailure = { rootSvcError: true, rootConnectionError: true, code: 'connection_failed' };
  expect(report.subpaths).toEqual({
    names: SUBPATH_NAMES,
    // One copy of the code per module system: the subpaths and the root share it.
    sameFunctions: true,
    themeError: clientFailure,
    licenseError: clientFailure,
    event: { webhookId: 'wh_sub' },
    mismatch: { code: 'signature_mismatch', rootWebhookError: true, rootSvcError: true },
    resolved: ['theme', 'webhooks', 'licenses'].map((name) =>
      path.join(dir, 'node_modules/@svc/sdk/dist', `${name}${extension}`),
    ),
  });
  expect(report.tolerance).toBe(300);
  expect(report.headerNames).toEqual([
    'content-type',
    'webhook-id',
    'webhook-signature',
    'webhook-timestamp',
    'x-service-signature',
  ]);
  expect(report.verified).toMatchObject({ ok: true, value: { scheme: 'service' } });
  expect(Math.abs(report.verified.value!.timestamp - Date.now() / 1000)).toBeLessThan(120);
  expect(report.standardOnly).toMatchObject({ ok: true, value: { scheme: 'standard' } });
  expect(report.fetchHeadersAndBytes).toMatchObject({ ok: true, value: { scheme: 'service' } });
  expect(report.event).toEqual({
    ok: true,
    value: {
      id: 'evt_pkg_1',
      event: 'webhook.test',
      createdAt: '2026-11-21T12:00:00.000Z',
      storeId: 'store_pkg',
      data: { webhookId: 'wh_pkg', note: 'Ключ 🔑' },
    },
  });
  const webhookFailure = {
    ok: false,
    name: 'WebhookVerificationError',
    code: 'signature_mismatch',
    isSvcError: true,
    svcError: true,
    apiError: false,
    webhookError: true,
  };
  expect(report.changedBody).toMatchObject(webhookFailure);
  expect(report.otherSecret).toMatchObject(webhookFailure);
  expect(report.connection).toEqual({
    ok: false,
    name: 'SvcConnectionError',
    code: 'connection_failed',
    type: 'connection',
    procedure: 'orders.list',
    isSvcError: true,
    svcError: true,
    apiError: true,
    connectionError: true,
    notFoundError: false,
    webhookError: false,
  });
  // maxRetries: 0 — a refused connection fails at once, no backoff.
  expect(report.connectionMs).toBeLessThan(5_000);
  expect(report.otherClients).toEqual({ theme: 'function', customer: 'function' });
}

describe('@svc/sdk from its packed tarball', () => {
  it('packs the built bundles, LICENSE and README, with a package.json without dependencies, and no warning', async () => {
    const files = packed.files.map((file) => file.path).sort();
    expect(files).toEqual(
      expect.arrayContaining([
        ...ENTRIES.flatMap((entry) => ENTRY_FILES.map((extension) => `dist/${entry}${extension}`)),
        'LICENSE',
        'README.md',
        'package.json',
      ]),
    );
    for (const file of files) {
      // Entries and the chunks they share; not the browser build the service serves.
      expect(file).toMatch(/^(dist\/[^/]+\.(js|cjs|d\.ts|d\.cts)|package\.json|README\.md|LICENSE)$/);
      expect(file).not.toMatch(/(^|\/)(src|scripts|apps|server|generated|node_modules|browser)\//);
    }
    expect(packStderr).not.toMatch(/warn/i);
    const manifest = JSON.parse(
      await readFile(path.join(consumers.esm, 'node_modules/@svc/sdk/package.json'), 'utf8'),
    ) as Record<string, unknown>;
    for (const field of [
      'dependencies',
      'peerDependencies',
      'optionalDependencies',
      'bundleDependencies',
      'bundledDependencies',
    ]) {
      expect(manifest[field] ?? {}, field).toEqual({});
    }
    expect(manifest.license).toBe('MIT');
    const entry = (name: string) => ({
      import: { types: `./dist/${name}.d.ts`, default: `./dist/${name}.js` },
      require: { types: `./dist/${name}.d.cts`, default: `./dist/${name}.cjs` },
    });
    expect(manifest.exports).toEqual({
      '.': entry('index'),
      './theme': entry('theme'),
      './webhooks': entry('webhooks'),
      './licenses': entry('licenses'),
      './package.json': './package.json',
    });
  });

  it('publishes (dry run) without a warning', async () => {
    const result = ok(
      await run('npm', ['publish', '--dry-run', '--ignore-scripts', '--json', '--offline'], SDK_DIR),
      'npm publish --dry-run',
    );
    // Nothing about the package (a missing field, a field npm corrects); only that nobody is logged in here.
    const warnings = result.stderr.split('\n').filter((line) => /warn/i.test(line));
    expect(warnings.filter((line) => !/requires you to be logged in/.test(line))).toEqual([]);
    const published = (
      JSON.parse(result.stdout) as Record<string, { name: string; version: string; files: Array<{ path: string }> }>
    )['@svc/sdk']!;
    expect(published).toMatchObject({ name: '@svc/sdk', version: '0.1.0' });
    expect(published.files.map((file) => file.path).sort()).toEqual(packed.files.map((file) => file.path).sort());
  });

  it('carries the MIT licence and a README that stands alone: tarball install, every entry point, no link into the repository', async () => {
    const installed = path.join(consumers.esm, 'node_modules/@svc/sdk');
    expect(await readFile(path.join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
    const readme = await readFile(path.join(installed, 'README.md'), 'utf8');
    // Every link goes to the web or within the README; none climbs into a repository the reader does not have.
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
    expect(links.filter((link) => !/^(https:\/\/|#)/.test(link))).toEqual([]);
    expect(readme).not.toMatch(/\.\.\//);
    // The install that works today, and the one for a published package.
    expect(readme).toContain('npm pack');
    expect(readme).toContain(`npm install ./${packed.filename}`);
    expect(readme).toContain('"@svc/sdk": "file:');
    expect(readme).toContain('npm install @svc/sdk');
    for (const entry of ['@svc/sdk/theme', '@svc/sdk/webhooks', '@svc/sdk/licenses', '/sdk/v1/theme.js'])
      expect(readme).toContain(entry);
    expect(readme).not.toMatch(/about 8 KB/);
  });

  it('installs as a single package: nothing else lands in node_modules', async () => {
    const dist = packed.files
      .map((file) => file.path)
      .filter((file) => file.startsWith('dist/'))
      .map((file) => file.slice('dist/'.length))
      .sort();
    for (const dir of Object.values(consumers)) {
      expect((await readdir(path.join(dir, 'node_modules'))).sort()).toEqual(['.package-lock.json', '@svc']);
      expect(await readdir(path.join(dir, 'node_modules/@svc'))).toEqual(['sdk']);
      expect((await readdir(path.join(dir, 'node_modules/@svc/sdk'))).sort()).toEqual([
        'LICENSE',
        'README.md',
        'dist',
        'package.json',
      ]);
      expect((await readdir(path.join(dir, 'node_modules/@svc/sdk/dist'))).sort()).toEqual(dist);
      const lock = JSON.parse(await readFile(path.join(dir, 'node_modules/.package-lock.json'), 'utf8')) as {
        packages: Record<string, unknown>;
      };
      expect(Object.keys(lock.packages)).toEqual(['node_modules/@svc/sdk']);
    }
  });

  it('ships declarations and bundles that import (or augment) no other package, nor Node built-ins', async () => {
    const dist = path.join(consumers.esm, 'node_modules/@svc/sdk/dist');
    const specifier =
      /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+|\bdeclare\s+module\s+|\/\/\/\s*<reference\s+(?:types|path)\s*=\s*)(['"])([^'"]+)\1/gm;
    const files = await readdir(dist);
    expect(files.length).toBeGreaterThanOrEqual(ENTRIES.length * ENTRY_FILES.length);
    for (const file of files) {
      const text = await readFile(path.join(dist, file), 'utf8');
      const named = [...text.matchAll(specifier)].map((match) => match[2]!);
      expect(
        named.filter((name) => !name.startsWith('./') && !name.startsWith('../')),
        `${file} names another module`,
      ).toEqual([]);
      expect(text, `${file} mentions @trpc or @svc/* by import`).not.toMatch(
        /['"](@trpc\/|@svc\/(server|schemas)|node:|zod)/,
      );
      // The declarations make sense without @types/node: no NodeJS namespace, no Buffer type.
      if (/\.d\.c?ts$/.test(file)) expect(text, file).not.toMatch(/\bNodeJS\.|:\s*Buffer\b|<Buffer>|\bBuffer\s*[|;>]/);
    }
  });

  it('works from an ESM script (named imports)', async () => {
    const result = ok(await run(process.execPath, ['main.js', String(port)], consumers.esm), 'ESM consumer');
    expectJsReport(JSON.parse(result.stdout) as JsReport, consumers.esm, 'index.js');
  });

  it('works from a CommonJS script, and recognises errors of the ESM copy loaded beside it', async () => {
    const result = ok(await run(process.execPath, ['main.cjs', String(port)], consumers.cjs), 'CJS consumer');
    const report = JSON.parse(result.stdout) as JsReport;
    expectJsReport(report, consumers.cjs, 'index.cjs');
    expect(report.crossCopy).toEqual({
      ok: false,
      distinctCopies: true,
      isSvcError: true,
      instanceOfThisCopy: false,
      type: 'connection',
    });
  });

  /** What the TypeScript consumer prints. */
  const tsReport = {
    scheme: 'service',
    timestamp: 1_790_000_000,
    described: 'order.paid ORD-7 0',
    changedBody: {
      ok: false,
      name: 'WebhookVerificationError',
      code: 'signature_mismatch',
      type: null,
      isSvcError: true,
      svcError: true,
      apiError: false,
      connectionError: false,
      webhookError: true,
    },
    stale: {
      ok: false,
      name: 'WebhookVerificationError',
      code: 'timestamp_out_of_tolerance',
      type: null,
      isSvcError: true,
      svcError: true,
      apiError: false,
      connectionError: false,
      webhookError: true,
    },
    connection: {
      ok: false,
      name: 'SvcConnectionError',
      code: 'connection_failed',
      type: 'connection',
      isSvcError: true,
      svcError: true,
      apiError: true,
      connectionError: true,
      webhookError: false,
    },
    license: {
      ok: false,
      name: 'SvcConnectionError',
      code: 'connection_failed',
      type: 'connection',
      isSvcError: true,
      svcError: true,
      apiError: true,
      connectionError: true,
      webhookError: false,
    },
    typeFacts: [true, true, true, true, true, true, true, true],
  };

  it('type-checks and runs in a TypeScript project with module node16 (ESM .ts and CommonJS .cts)', async () => {
    const dir = consumers.node16;
    // One compile, which also says where each import's declarations came from.
    const traced = ok(await run(process.execPath, [TSC, '-p', '.', '--traceResolution'], dir), 'tsc (node16)').stdout;
    expect(traced).toMatch(
      /Module name '@svc\/sdk' was successfully resolved to '[^']*\/node_modules\/@svc\/sdk\/dist\/index\.d\.ts'/,
    );
    expect(traced).toMatch(
      /Module name '@svc\/sdk' was successfully resolved to '[^']*\/node_modules\/@svc\/sdk\/dist\/index\.d\.cts'/,
    );
    // Each subpath through the exports map, to its own declarations for each module system.
    for (const entry of ['theme', 'webhooks', 'licenses'])
      for (const extension of ['d.ts', 'd.cts'])
        expect(traced).toContain(
          `Module name '@svc/sdk/${entry}' was successfully resolved to '${dir}/node_modules/@svc/sdk/dist/${entry}.${extension}'`,
        );
    // Each file compiled to its module system, so both halves of the exports map were used.
    expect(await readFile(path.join(dir, 'out/esm.js'), 'utf8')).toMatch(/from '@svc\/sdk'/);
    expect(await readFile(path.join(dir, 'out/cjs.cjs'), 'utf8')).toMatch(/require\("@svc\/sdk"\)/);
    const [esm, cjs] = await Promise.all([
      run(process.execPath, ['out/esm.js', String(port)], dir),
      run(process.execPath, ['out/cjs.cjs', String(port)], dir),
    ]);
    expect(JSON.parse(ok(esm, 'node16 consumer, ESM').stdout)).toEqual(tsReport);
    expect(JSON.parse(ok(cjs, 'node16 consumer, CommonJS').stdout)).toEqual(tsReport);
  });

  it('type-checks with moduleResolution bundler and runs as an esbuild bundle', async () => {
    const dir = consumers.bundler;
    const traced = ok(await run(process.execPath, [TSC, '-p', '.', '--traceResolution'], dir), 'tsc (bundler)').stdout;
    for (const entry of ['theme', 'webhooks', 'licenses'])
      expect(traced).toContain(
        `Module name '@svc/sdk/${entry}' was successfully resolved to '${dir}/node_modules/@svc/sdk/dist/${entry}.d.ts'`,
      );
    ok(
      await run(
        ESBUILD,
        ['src/main.ts', '--bundle', '--platform=node', '--format=esm', '--outfile=out/main.mjs', '--log-level=warning'],
        dir,
      ),
      'esbuild',
    );
    const bundle = await readFile(path.join(dir, 'out/main.mjs'), 'utf8');
    expect(bundle).not.toMatch(/from ['"]@svc\/sdk['"]/); // bundled in, from the package's ESM entry
    expect(bundle).toMatch(/node_modules\/@svc\/sdk\/dist\/index\.js/);
    expect(
      JSON.parse(ok(await run(process.execPath, ['out/main.mjs', String(port)], dir), 'bundled consumer').stdout),
    ).toEqual(tsReport);
  });

  it('types events.iterate so that `data` narrows on `event`, with no cast (strict tsc)', async () => {
    const result = await run(process.execPath, [TSC, '-p', '.'], consumers.events);
    ok(result, 'tsc (events)');
  });
});
