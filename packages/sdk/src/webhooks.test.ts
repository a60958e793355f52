/**
 * Webhook verification against the server's own signatures (apps/server signing.ts is the
 * signer; importing it here is test-only), plus what the published bundle may contain.
 */
import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { build } from 'tsup';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  newWebhookSecret,
  serviceSignature,
  signatureHeaders,
  standardSignature,
} from '../../../apps/server/src/modules/webhooks/signing.js';
import type { TMerchantLicense, TOrderDetail, TProduct, TSubscription } from '../../schemas/src/index.js';
import { ERROR_CODES as SCHEMA_ERROR_CODES } from '../../schemas/src/errors.js';
import {
  constructEvent,
  ERROR_CODES,
  generateTestHeader,
  isSvcError,
  SvcError,
  verifySignature,
  WebhookVerificationError,
  type OrderDetail,
  type Product,
  type MerchantLicense,
  type VerifyOptions,
  type WebhookEvent,
  type WebhookHeaders,
  type WebhookVerificationErrorCode,
} from './index.js';

const SDK_DIR = dirname(dirname(fileURLToPath(import.meta.url)));

const NOW = new Date('2026-11-21T12:00:00.000Z');
const NOW_S = Math.floor(NOW.getTime() / 1000);
const AT_NOW: VerifyOptions = { now: NOW };

const order: OrderDetail = {
  id: 'ord1',
  orderId: 'ORD-1',
  storeId: 'store1',
  livemode: true,
  status: 'paid',
  productName: 'Ключ — “Pro” 🔑',
  price: 10,
  discount: 0,
  couponCode: null,
  paid: 10,
  paymentMethod: 'stripe',
  customerEmail: 'buyer@example.com',
  country: 'DE',
  keyCount: 1,
  subscriptionId: null,
  billingReason: 'purchase',
  subtotal: 10,
  taxAmount: 0,
  taxRate: null,
  taxCountry: null,
  reverseCharge: false,
  invoiceNumber: null,
  creditNoteNumber: null,
  createdAt: '2026-11-21T11:59:00.000Z',
  completedAt: null,
  updatedAt: '2026-11-21T11:59:30.000Z',
  note: '',
  customFieldResponses: [{ name: 'Discord', value: 'buyer#1' }],
};

/** A body as the dispatcher's eventBody() serialises it. */
function body(event = 'order.paid', data: unknown = { order }, id = 'evt_abc123'): string {
  return JSON.stringify({ id, event, createdAt: '2026-11-21T11:59:30.000Z', storeId: 'store1', livemode: true, data });
}

/** The headers the server sends, from the server's own signer. */
function serverHeaders(
  secret: string,
  payload: string,
  timestamp = NOW_S,
  eventId = 'evt_abc123',
): Record<string, string> {
  return signatureHeaders(secret, { eventId, event: 'order.paid', deliveryId: 'del1', timestamp, body: payload });
}

/** The headers without the named ones. */
function without(headers: Record<string, string>, ...names: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.includes(name)));
}

function onlyService(headers: Record<string, string>): Record<string, string> {
  return without(headers, 'webhook-id', 'webhook-timestamp', 'webhook-signature');
}

function onlyStandard(headers: Record<string, string>): Record<string, string> {
  return without(headers, 'x-service-signature');
}

const SCHEMES = [
  ['X-Service-Signature', onlyService, 'service'],
  ['Standard Webhooks', onlyStandard, 'standard'],
] as const;

async function failure(promise: Promise<unknown>): Promise<WebhookVerificationError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the verification to fail');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WebhookVerificationError);
  expect(error).toBeInstanceOf(SvcError);
  return error as WebhookVerificationError;
}

async function expectCode(
  promise: Promise<unknown>,
  code: WebhookVerificationErrorCode,
): Promise<WebhookVerificationError> {
  const error = await failure(promise);
  expect(error.code, error.message).toBe(code);
  return error;
}

describe('verifySignature with the server signatures', () => {
  const secret = newWebhookSecret();
  const payload = body();

  it.each(SCHEMES)('%s alone verifies', async (_name, pick, scheme) => {
    await expect(verifySignature(payload, pick(serverHeaders(secret, payload)), secret, AT_NOW)).resolves.toEqual({
      scheme,
      timestamp: NOW_S,
    });
  });

  it("takes the X-Service-Signature header's value in place of the headers (Stripe's shape)", async () => {
    const headers = serverHeaders(secret, payload);
    const signature = String(headers['x-service-signature']);
    await expect(verifySignature(payload, signature, secret, AT_NOW)).resolves.toEqual({
      scheme: 'service',
      timestamp: NOW_S,
    });
    const event = await constructEvent(payload, signature, secret, AT_NOW);
    expect(event.id).toBe(JSON.parse(payload).id);
    await expectCode(verifySignature(body('order.refunded'), signature, secret, AT_NOW), 'signature_mismatch');
    await expectCode(verifySignature(payload, 'not a signature', secret, AT_NOW), 'malformed_header');
  });

  it('with both sets of headers, checks ours and does not fall back when ours is wrong', async () => {
    const headers = serverHeaders(secret, payload);
    await expect(verifySignature(payload, headers, secret, AT_NOW)).resolves.toEqual({
      scheme: 'service',
      timestamp: NOW_S,
    });
    const forged = { ...headers, 'x-service-signature': `t=${NOW_S},v1=${'0'.repeat(64)}` };
    await expectCode(verifySignature(payload, forged, secret, AT_NOW), 'signature_mismatch');
  });

  it.each(SCHEMES)('%s: a changed body fails', async (_name, pick) => {
    const headers = pick(serverHeaders(secret, payload));
    await expectCode(verifySignature(body('order.refunded'), headers, secret, AT_NOW), 'signature_mismatch');
    await expectCode(verifySignature(`${payload} `, headers, secret, AT_NOW), 'signature_mismatch');
    // Re-serialised JSON (key order, spacing) is another body too.
    await expectCode(
      verifySignature(JSON.stringify(JSON.parse(payload), null, 1), headers, secret, AT_NOW),
      'signature_mismatch',
    );
  });

  it('a changed timestamp fails (X-Service-Signature t=)', async () => {
    const headers = onlyService(serverHeaders(secret, payload));
    const shifted = {
      ...headers,
      'x-service-signature': headers['x-service-signature']!.replace(`t=${NOW_S}`, `t=${NOW_S + 1}`),
    };
    await expectCode(verifySignature(payload, shifted, secret, AT_NOW), 'signature_mismatch');
  });

  it('a changed timestamp fails (webhook-timestamp) and so does a changed webhook-id', async () => {
    const headers = onlyStandard(serverHeaders(secret, payload));
    await expectCode(
      verifySignature(payload, { ...headers, 'webhook-timestamp': String(NOW_S + 1) }, secret, AT_NOW),
      'signature_mismatch',
    );
    await expectCode(
      verifySignature(payload, { ...headers, 'webhook-id': 'evt_other' }, secret, AT_NOW),
      'signature_mismatch',
    );
  });

  it.each(SCHEMES)('%s: a stale timestamp fails beyond the tolerance, passes within it', async (_name, pick) => {
    const stale = pick(serverHeaders(secret, payload, NOW_S - 301));
    const error = await expectCode(verifySignature(payload, stale, secret, AT_NOW), 'timestamp_out_of_tolerance');
    expect(error.message).toMatch(/301 s old/);
    await expect(
      verifySignature(payload, pick(serverHeaders(secret, payload, NOW_S - 300)), secret, AT_NOW),
    ).resolves.toBeTruthy();
    await expect(verifySignature(payload, stale, secret, { ...AT_NOW, toleranceSeconds: 600 })).resolves.toBeTruthy();
    await expectCode(
      verifySignature(payload, pick(serverHeaders(secret, payload, NOW_S - 61)), secret, {
        ...AT_NOW,
        toleranceSeconds: 60,
      }),
      'timestamp_out_of_tolerance',
    );
  });

  it.each(SCHEMES)('%s: a future timestamp fails beyond the tolerance', async (_name, pick) => {
    const future = pick(serverHeaders(secret, payload, NOW_S + 301));
    const error = await expectCode(verifySignature(payload, future, secret, AT_NOW), 'timestamp_out_of_tolerance');
    expect(error.message).toMatch(/future/);
    await expect(
      verifySignature(payload, pick(serverHeaders(secret, payload, NOW_S + 300)), secret, AT_NOW),
    ).resolves.toBeTruthy();
  });

  it('uses the real clock when no `now` is given', async () => {
    const nowS = Math.floor(Date.now() / 1000);
    await expect(verifySignature(payload, serverHeaders(secret, payload, nowS), secret)).resolves.toEqual({
      scheme: 'service',
      timestamp: nowS,
    });
    await expectCode(
      verifySignature(payload, serverHeaders(secret, payload, nowS - 3600), secret),
      'timestamp_out_of_tolerance',
    );
  });

  it.each(SCHEMES)('%s: a rotated secret fails', async (_name, pick) => {
    const rotated = newWebhookSecret();
    await expectCode(
      verifySignature(payload, pick(serverHeaders(secret, payload)), rotated, AT_NOW),
      'signature_mismatch',
    );
  });

  it.each(SCHEMES)(
    '%s: the body as Buffer (pooled, with an offset), Uint8Array and ArrayBuffer verifies, non-ASCII included',
    async (_name, pick) => {
      const headers = pick(serverHeaders(secret, payload));
      const buffer = Buffer.from(payload);
      expect(payload).toMatch(/[^\p{ASCII}]/u);
      const uint8 = new Uint8Array(buffer);
      const arrayBuffer = uint8.buffer.slice(uint8.byteOffset, uint8.byteOffset + uint8.byteLength);
      for (const raw of [buffer, uint8, arrayBuffer])
        await expect(verifySignature(raw, headers, secret, AT_NOW)).resolves.toBeTruthy();
      const padded = new Uint8Array(buffer.length + 8);
      padded.set(buffer, 4);
      await expect(
        verifySignature(padded.subarray(4, 4 + buffer.length), headers, secret, AT_NOW),
      ).resolves.toBeTruthy();
    },
  );

  it('several signatures in a header: any match passes', async () => {
    const headers = serverHeaders(secret, payload);
    const other = newWebhookSecret();
    const service = {
      'x-service-signature': `${serviceSignature(other, NOW_S, payload)},v1=${headers['x-service-signature']!.split('v1=')[1]}`,
    };
    await expect(verifySignature(payload, service, secret, AT_NOW)).resolves.toMatchObject({ scheme: 'service' });
    const standard = {
      ...onlyStandard(headers),
      'webhook-signature': `${standardSignature(other, 'evt_abc123', NOW_S, payload)} v1a,aGVsbG8= ${headers['webhook-signature']}`,
    };
    await expect(verifySignature(payload, standard, secret, AT_NOW)).resolves.toMatchObject({ scheme: 'standard' });
    await expectCode(
      verifySignature(
        payload,
        { ...standard, 'webhook-signature': standardSignature(other, 'evt_abc123', NOW_S, payload) },
        secret,
        AT_NOW,
      ),
      'signature_mismatch',
    );
  });
});

describe('verifySignature refuses bad inputs', () => {
  const secret = newWebhookSecret();
  const payload = body();
  const headers = serverHeaders(secret, payload);

  it('a parsed object (or anything not raw) -> payload_not_raw, saying to pass the raw bytes', async () => {
    const error = await expectCode(
      verifySignature(JSON.parse(payload) as never, headers, secret, AT_NOW),
      'payload_not_raw',
    );
    expect(error.message).toMatch(/raw/);
    expect(error.message).toMatch(/got an object/);
    for (const parsed of [null, undefined, 42, [1, 2]])
      await expectCode(verifySignature(parsed as never, headers, secret, AT_NOW), 'payload_not_raw');
    await expectCode(constructEvent(JSON.parse(payload) as never, headers, secret, AT_NOW), 'payload_not_raw');
  });

  it('headers that are neither headers nor a signature string -> headers_invalid, saying what to pass', async () => {
    for (const wrong of [undefined, null, 42, true, ['x-service-signature', 't=1,v1=00']]) {
      const error = await expectCode(verifySignature(payload, wrong as never, secret, AT_NOW), 'headers_invalid');
      expect(error.message).toMatch(/X-Service-Signature header's value as a string/);
      await expectCode(constructEvent(payload, wrong as never, secret, AT_NOW), 'headers_invalid');
    }
    await expectCode(verifySignature(payload, '', secret, AT_NOW), 'malformed_header');
  });

  it('a secret with surrounding whitespace -> secret_malformed', async () => {
    for (const padded of [`${secret}\n`, ` ${secret}`, `\t${secret} `]) {
      const error = await expectCode(verifySignature(payload, headers, padded, AT_NOW), 'secret_malformed');
      expect(error.message).toContain('the secret has surrounding whitespace');
      expect(error.message).not.toContain(secret);
    }
  });

  it('a secret that is not whsec_... -> secret_malformed', async () => {
    for (const bad of [secret.slice('whsec_'.length), 'whsec_', 'sk_live_abc', '', undefined as never]) {
      await expectCode(verifySignature(payload, headers, bad, AT_NOW), 'secret_malformed');
    }
    // The Standard Webhooks key is the base64 after whsec_: not base64 -> malformed, not a mismatch.
    await expectCode(verifySignature(payload, onlyStandard(headers), 'whsec_not*base64!', AT_NOW), 'secret_malformed');
  });

  it('tolerance 0, negative or not a number is refused, never a silent skip', async () => {
    for (const toleranceSeconds of [0, -1, -300, Number.NaN, Number.POSITIVE_INFINITY, '300' as never]) {
      await expectCode(verifySignature(payload, headers, secret, { ...AT_NOW, toleranceSeconds }), 'tolerance_invalid');
    }
    await expect(verifySignature(payload, headers, secret, { now: new Date('not a date') })).rejects.toThrow(TypeError);
    // Refused even when everything else is right and the timestamp is current.
    await expectCode(constructEvent(payload, headers, secret, { ...AT_NOW, toleranceSeconds: 0 }), 'tolerance_invalid');
  });

  it('no signature header, or an incomplete Standard Webhooks set -> missing_header', async () => {
    await expectCode(
      verifySignature(payload, { 'content-type': 'application/json' }, secret, AT_NOW),
      'missing_header',
    );
    await expectCode(verifySignature(payload, new Headers(), secret, AT_NOW), 'missing_header');
    const noTimestamp = without(onlyStandard(headers), 'webhook-timestamp');
    const error = await expectCode(verifySignature(payload, noTimestamp, secret, AT_NOW), 'missing_header');
    expect(error.message).toContain('webhook-timestamp');
  });

  it('unparseable signature headers -> malformed_header', async () => {
    const v1 = headers['x-service-signature']!.split(',')[1]!;
    for (const value of [
      '',
      'garbage',
      v1,
      `t=${NOW_S}`,
      `t=abc,${v1}`,
      `t=${NOW_S},v1=zz`,
      `t=${NOW_S},t=${NOW_S},${v1}`,
    ]) {
      await expectCode(verifySignature(payload, { 'x-service-signature': value }, secret, AT_NOW), 'malformed_header');
    }
    const standard = onlyStandard(headers);
    for (const patch of [
      { 'webhook-signature': 'v1,not base64!' },
      { 'webhook-signature': 'nocomma' },
      { 'webhook-signature': 'v1a,aGVsbG8=' },
      { 'webhook-timestamp': '1.5' },
      { 'webhook-id': '' },
    ]) {
      await expectCode(verifySignature(payload, { ...standard, ...patch }, secret, AT_NOW), 'malformed_header');
    }
    await expectCode(
      verifySignature(payload, { 'X-Service-Signature': 'a', 'x-service-signature': 'b' }, secret, AT_NOW),
      'malformed_header',
    );
  });
});

describe('headers: Headers instances and plain objects, any case', () => {
  const secret = newWebhookSecret();
  const payload = body();
  const headers = serverHeaders(secret, payload);
  const upper = (h: Record<string, string>) =>
    Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toUpperCase(), v]));
  const title = (h: Record<string, string>) =>
    Object.fromEntries(
      Object.entries(h).map(([k, v]) => [
        k.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase()),
        v,
      ]),
    );

  it.each(SCHEMES)('%s', async (_name, pick, scheme) => {
    const picked = pick(headers);
    const variants: WebhookHeaders[] = [
      picked,
      upper(picked),
      title(picked),
      new Headers(picked),
      new Headers(upper(picked)),
      // Node's IncomingHttpHeaders may hold arrays
      Object.fromEntries(Object.entries(picked).map(([k, v]) => [k, [v]])),
    ];
    for (const variant of variants)
      await expect(verifySignature(payload, variant, secret, AT_NOW)).resolves.toMatchObject({ scheme });
  });
});

describe('constructEvent', () => {
  const secret = newWebhookSecret();

  it('verifies, then returns the typed event, discriminated on `event`', async () => {
    const payload = body();
    const event = await constructEvent(
      Buffer.from(payload),
      new Headers(serverHeaders(secret, payload)),
      secret,
      AT_NOW,
    );
    expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    expect(event).toEqual(JSON.parse(payload));
    expect(event.event).toBe('order.paid');
    if (event.event !== 'order.paid') throw new Error('unreachable');
    expectTypeOf(event.data).toEqualTypeOf<{ order: OrderDetail }>();
    expect(event.data.order.productName).toBe(order.productName);
    expect(event.data.order.customFieldResponses).toEqual([{ name: 'Discord', value: 'buyer#1' }]);
  });

  it('product and test events narrow too', async () => {
    const payload = body('webhook.test', { webhookId: 'wh1' }, 'evt_test1');
    const event = await constructEvent(
      payload,
      onlyStandard(serverHeaders(secret, payload, NOW_S, 'evt_test1')),
      secret,
      AT_NOW,
    );
    switch (event.event) {
      case 'webhook.test':
        expectTypeOf(event.data).toEqualTypeOf<{ webhookId: string }>();
        expect(event.data.webhookId).toBe('wh1');
        break;
      case 'product.created':
      case 'product.updated':
      case 'product.deleted':
        expectTypeOf(event.data.product).toEqualTypeOf<Product>();
        throw new Error('unreachable');
      case 'license.activated':
      case 'license.deactivated':
      case 'license.disabled':
      case 'license.enabled':
        expectTypeOf(event.data.license).toEqualTypeOf<MerchantLicense>();
        throw new Error('unreachable');
      case 'subscription.created':
      case 'subscription.updated':
      case 'subscription.renewed':
      case 'subscription.past_due':
      case 'subscription.canceled':
      case 'subscription.uncanceled':
      case 'subscription.paused':
      case 'subscription.resumed':
      case 'subscription.ended':
      case 'subscription.trial_will_end':
        expectTypeOf(event.data.subscription.status).toEqualTypeOf<TSubscription['status']>();
        throw new Error('unreachable');
      default:
        expectTypeOf(event.data).toEqualTypeOf<{ order: OrderDetail }>();
        throw new Error('unreachable');
    }
  });

  it('does not parse a body whose signature fails', async () => {
    const payload = body();
    await expectCode(
      constructEvent(body('order.refunded'), serverHeaders(secret, payload), secret, AT_NOW),
      'signature_mismatch',
    );
  });

  it('the SDK models are the server schemas, field for field (type-level)', () => {
    expectTypeOf<OrderDetail>().toEqualTypeOf<TOrderDetail>();
    expectTypeOf<Product>().toEqualTypeOf<TProduct>();
    expectTypeOf<MerchantLicense>().toEqualTypeOf<TMerchantLicense>();
  });
});

describe('generateTestHeader', () => {
  const secret = newWebhookSecret();
  const payload = body();

  it.each(SCHEMES)('its headers verify with %s', async (_name, pick, scheme) => {
    const headers = await generateTestHeader({ payload, secret, timestamp: NOW_S });
    await expect(verifySignature(payload, pick(headers), secret, AT_NOW)).resolves.toEqual({
      scheme,
      timestamp: NOW_S,
    });
    await expectCode(verifySignature(payload, pick(headers), newWebhookSecret(), AT_NOW), 'signature_mismatch');
  });

  it('matches the server scheme computed independently with node:crypto', async () => {
    const headers = await generateTestHeader({
      payload: Buffer.from(payload),
      secret,
      timestamp: NOW_S,
      eventId: 'evt_given',
    });
    const hex = createHmac('sha256', secret).update(`${NOW_S}.${payload}`).digest('hex');
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const b64 = createHmac('sha256', key).update(`evt_given.${NOW_S}.${payload}`).digest('base64');
    expect(headers).toEqual({
      'content-type': 'application/json',
      'x-service-signature': `t=${NOW_S},v1=${hex}`,
      'webhook-id': 'evt_given',
      'webhook-timestamp': String(NOW_S),
      'webhook-signature': `v1,${b64}`,
    });
    // ...and equals what the server itself sends.
    const server = serverHeaders(secret, payload, NOW_S, 'evt_given');
    for (const name of ['x-service-signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature'])
      expect(headers[name]).toBe(server[name]);
  });

  it("defaults: now, and the payload's id (else a random evt_test_ id)", async () => {
    const before = Math.floor(Date.now() / 1000);
    const headers = await generateTestHeader({ payload, secret });
    expect(Number(headers['webhook-timestamp'])).toBeGreaterThanOrEqual(before);
    expect(headers['webhook-id']).toBe('evt_abc123');
    await expect(constructEvent(payload, headers, secret)).resolves.toMatchObject({ id: 'evt_abc123' });
    const plain = await generateTestHeader({ payload: 'not json', secret });
    expect(plain['webhook-id']).toMatch(/^evt_test_[0-9a-f]{24}$/);
    await expect(verifySignature('not json', onlyStandard(plain), secret)).resolves.toMatchObject({
      scheme: 'standard',
    });
  });

  it('refuses what verifySignature refuses', async () => {
    await expectCode(generateTestHeader({ payload: JSON.parse(payload) as never, secret }), 'payload_not_raw');
    await expectCode(generateTestHeader({ payload, secret: ` ${secret}` }), 'secret_malformed');
  });
});

describe('errors', () => {
  it('WebhookVerificationError is an SvcError with a code, recognisable across copies', () => {
    const error = new WebhookVerificationError('signature_mismatch', 'no');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('WebhookVerificationError');
    expect(isSvcError(error)).toBe(true);
    expect(isSvcError(new Error('x'))).toBe(false);
    expect(isSvcError({ code: 'x', message: 'y' })).toBe(false);
    const api = new SvcError('Slow down', { code: 'rate_limited', status: 429, retryAfter: 30 });
    expect({
      name: api.name,
      code: api.code,
      status: api.status,
      retryAfter: api.retryAfter,
      message: api.message,
    }).toEqual({
      name: 'SvcError',
      code: 'rate_limited',
      status: 429,
      retryAfter: 30,
      message: 'Slow down',
    });
    expect('status' in error).toBe(false);
  });

  it('ERROR_CODES is the server list (the SDK keeps a zod-free copy)', () => {
    expect([...ERROR_CODES]).toEqual([...SCHEMA_ERROR_CODES]);
  });
});

describe('the published package', () => {
  it('the built bundle imports nothing (no node: built-ins, no zod, no @svc/schemas, no server) and runs on web globals alone', async () => {
    const outDir = await mkdtemp(join(tmpdir(), 'svc-sdk-build-'));
    try {
      // The package's own build (package.json "build"), into a scratch directory.
      await build({
        entry: [join(SDK_DIR, 'src/index.ts')],
        format: ['esm', 'cjs'],
        outDir,
        tsconfig: join(SDK_DIR, 'tsconfig.json'),
        config: false,
        // As tsup.config.ts: the tRPC client travels inside the bundle.
        noExternal: [/^@trpc\//],
        platform: 'neutral',
        dts: false,
        clean: true,
        silent: true,
        metafile: true,
      });
      const esm = await readFile(join(outDir, 'index.js'), 'utf8');
      const cjs = await readFile(join(outDir, 'index.cjs'), 'utf8');
      for (const code of [esm, cjs]) {
        expect(code).not.toMatch(/["']node:/);
        expect(code).not.toMatch(/["'](crypto|buffer|zod|@svc\/schemas)["']/);
        expect(code).not.toMatch(/\bzod\b/i);
        expect(code).not.toMatch(/\brequire\s*\(/);
        expect(code).not.toMatch(/\bimport\s*\(/);
      }
      expect(esm).not.toMatch(/^\s*import\b/m);
      // Every byte of the bundle comes from the SDK's own sources or the tRPC client it bundles.
      const meta = JSON.parse(await readFile(join(outDir, 'metafile-esm.json'), 'utf8')) as {
        inputs: Record<string, unknown>;
      };
      const inputs = Object.keys(meta.inputs).map((input) => relative(SDK_DIR, join(process.cwd(), input)));
      expect(inputs.length).toBeGreaterThan(0);
      for (const input of inputs)
        expect(input).toMatch(
          /^(src\/((generated|subpaths)\/)?[a-z-]+\.ts|\.\.\/\.\.\/node_modules\/@trpc\/(client|server)\/dist\/[\w./-]+\.mjs)$/,
        );
      expect(inputs.some((input) => input.includes('@trpc/client'))).toBe(true);

      // The built ESM works on its own, with WebCrypto only.
      const sdk = (await import(join(outDir, 'index.js'))) as typeof import('./index.js');
      const secret = newWebhookSecret();
      const payload = body();
      await expect(sdk.constructEvent(payload, serverHeaders(secret, payload), secret, AT_NOW)).resolves.toMatchObject({
        event: 'order.paid',
      });

      // ...and in a realm with nothing but web globals (as in a browser or an edge runtime): no
      // Buffer, process or require. The body comes from this realm, an ArrayBuffer included.
      const module = { exports: {} as typeof import('./index.js') };
      const web = { crypto: globalThis.crypto, TextEncoder, TextDecoder, atob, btoa, module, exports: module.exports };
      runInNewContext(cjs, web);
      const edge = module.exports;
      const arrayBuffer = new TextEncoder().encode(payload).buffer;
      await expect(
        edge.verifySignature(arrayBuffer, new Headers(serverHeaders(secret, payload)), secret, AT_NOW),
      ).resolves.toEqual({ scheme: 'service', timestamp: NOW_S });
      const test = await edge.generateTestHeader({ payload, secret, timestamp: NOW_S });
      await expect(verifySignature(payload, onlyStandard(test), secret, AT_NOW)).resolves.toMatchObject({
        scheme: 'standard',
      });
      await expect(
        edge.verifySignature(payload, serverHeaders(secret, payload), newWebhookSecret(), AT_NOW),
      ).rejects.toMatchObject({ code: 'signature_mismatch' });
    } finally {
      await rm(outDir, { recursive: true, force: true });
    }
  });

  it('package.json is publishable: exports map, files, sideEffects, no runtime dependencies', async () => {
    const pkg = JSON.parse(await readFile(join(SDK_DIR, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg.private).toBeUndefined();
    expect(pkg.exports).toMatchObject({
      '.': {
        import: { types: './dist/index.d.ts', default: './dist/index.js' },
        require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
      },
    });
    // The built bundles; not the browser build, which the service serves at /sdk/v1/theme.js.
    expect(pkg.files).toEqual(['dist', '!dist/browser']);
    expect(pkg.license).toBe('MIT');
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.dependencies).toBeUndefined();
    expect(pkg.peerDependencies).toBeUndefined();
  });
});
