/**
 * The README documents every method (issue 27, item 6): its method reference is the one
 * scripts/method-reference.mjs makes from the types (so parameters and answers are the declared
 * ones), and every method the clients have at run time has its row there, with its parameters
 * and its answer, so a new method cannot go undocumented.
 */
import { execFileSync } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signatureHeaders } from '../../../apps/server/src/modules/webhooks/signing.js';
import { createCustomerClient, createLicenseClient, createMerchantClient, createThemeClient } from './index.js';

const SDK_DIR = dirname(dirname(fileURLToPath(import.meta.url)));
const README = readFileSync(join(SDK_DIR, 'README.md'), 'utf8');
const baseUrl = 'http://127.0.0.1:9';

/** The clients as the reference names them (`svc.orders.list`), made without calling anything. */
const CLIENTS: Record<string, object> = {
  svc: createMerchantClient({ baseUrl, apiKey: `sk_${'a'.repeat(40)}` }),
  shop: createThemeClient({ baseUrl, storeId: 'store1' }),
  me: createCustomerClient({ baseUrl, storeId: 'store1' }),
  licenses: createLicenseClient({ baseUrl, productId: 'product1' }),
};

/** The stored cart's own methods: they work on the browser's storage and answer at once, not a Promise. */
const LOCAL_METHODS = new Set([
  'shop.cart.lines',
  'shop.cart.add',
  'shop.cart.setPlan',
  'shop.cart.update',
  'shop.cart.remove',
  'shop.cart.clear',
  'shop.cart.coupon',
  'shop.cart.removeCoupon',
  'shop.cart.setBilling',
  'shop.cart.billing',
]);

/** Every function reachable from a client, as `svc.orders.list`. */
function methodsOf(prefix: string, value: object): string[] {
  return Object.entries(value).flatMap(([name, member]: [string, unknown]) => {
    if (typeof member === 'function') return [`${prefix}.${name}`];
    if (typeof member === 'object' && member !== null) return methodsOf(`${prefix}.${name}`, member);
    return [];
  });
}

describe('the SDK README', () => {
  it('has the method reference the types make (scripts/method-reference.mjs --check)', () => {
    // Throws, with the script's message, when the README's section differs from the types.
    execFileSync(process.execPath, [join(SDK_DIR, 'scripts', 'method-reference.mjs'), '--check'], {
      stdio: 'pipe',
    });
  }, 60_000);

  it('has a row for every method of every client, with its parameters and its answer', () => {
    const methods = Object.entries(CLIENTS).flatMap(([name, client]) => methodsOf(name, client));
    expect(methods.length).toBeGreaterThan(60);
    for (const method of methods) {
      const row = README.split('\n').find(
        (line) => line.startsWith(`| \`${method}\``) || line.startsWith(`| \`${method}<`),
      );
      expect(row, `${method} is not in the README's method reference`).toBeDefined();
      const [, , parameters, answer] = row!.split(/(?<!\\)\|/).map((cell) => cell.trim());
      expect(parameters, method).toMatch(/^(`.+`|—)$/);
      expect(answer, method).toMatch(LOCAL_METHODS.has(method) ? /^`[^`]+`$/ : /^`(Promise|AsyncGenerator)<.+>`$/);
    }
    for (const name of ['products.create', 'licenseKeys.add', 'events.list'])
      expect(methods, `${name} is a merchant method`).toContain(`svc.${name}`);
  });

  it('says where license keys come from', () => {
    expect(README).toContain('## License keys: where they come from');
    expect(README).toContain('svc.licenseKeys.add({ storeId,');
  });

  it("has a plain-Node verification that accepts the server's own signature and nothing else", () => {
    const section = README.slice(README.indexOf('## Webhook signatures, without the SDK'));
    expect(section).toContain('X-Service-Signature: t=<unix seconds>,v1=<hex>');
    const block = /```js\n([\s\S]*?)```/.exec(section)![1]!;
    const source = block.slice(block.indexOf('function verifyServiceSignature'), block.indexOf('createServer('));
    const verify = runInNewContext(`${source}; verifyServiceSignature`, { createHmac, timingSafeEqual, Buffer }) as (
      rawBody: Buffer,
      header: string | undefined,
      secret: string,
      now?: number,
    ) => boolean;

    const secret = newWebhookSecret();
    const body = JSON.stringify({
      id: 'evt_1',
      event: 'webhook.test',
      createdAt: new Date(0).toISOString(),
      storeId: 's1',
      data: { webhookId: 'wh1' },
    });
    const now = 1_800_000_000;
    const headers = signatureHeaders(secret, {
      eventId: 'evt_1',
      event: 'webhook.test',
      deliveryId: 'del1',
      timestamp: now,
      body,
    });
    const header = Object.entries(headers).find(([name]) => name.toLowerCase() === 'x-service-signature')![1];
    expect(verify(Buffer.from(body), header, secret, now)).toBe(true);
    expect(verify(Buffer.from(body), header, secret, now - 299)).toBe(true);
    expect(verify(Buffer.from(`${body} `), header, secret, now)).toBe(false);
    expect(verify(Buffer.from(body), header, newWebhookSecret(), now)).toBe(false);
    expect(verify(Buffer.from(body), header, secret, now + 301)).toBe(false);
    expect(verify(Buffer.from(body), undefined, secret, now)).toBe(false);
  });
});
