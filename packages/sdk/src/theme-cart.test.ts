/**
 * The theme client's cart without a browser: a Map-backed storage for `localStorage` and a fake
 * service behind `fetch` (the tRPC answers the service gives), so storage, merging, the per-mode
 * keys, hydration and its failures, the coupon and the checkout are each checked on their own.
 */
import { describe, expect, it } from 'vitest';
import { SvcConnectionError, SvcNotFoundError } from './api-errors.js';
import { createThemeClient, type ThemeClientOptions } from './theme.js';
import { parseCartLines, type CartStorage } from './theme-cart.js';

const baseUrl = 'http://svc.test';

/** `localStorage` over a Map; `refuse` makes every write throw, as a full or private-mode storage does. */
function mapStorage(entries: Record<string, string> = {}, refuse = false): CartStorage & { map: Map<string, string> } {
  const map = new Map(Object.entries(entries));
  return {
    map,
    getItem: (key) => map.get(key) ?? null,
    setItem: (key, value) => {
      if (refuse) throw new Error('QuotaExceededError');
      map.set(key, value);
    },
    removeItem: (key) => {
      if (refuse) throw new Error('QuotaExceededError');
      map.delete(key);
    },
  };
}

interface Call {
  procedure: string;
  input: Record<string, unknown>;
  headers: Headers;
}

type Answer = { status?: number; data?: unknown; error?: { code: string; message: string } } | 'network';

/** A fetch that answers each procedure as the service's tRPC endpoint would, and records the calls. */
function fakeService(answers: Record<string, (input: Record<string, unknown>) => Answer>) {
  const calls: Call[] = [];
  const fetch = (url: string, init: RequestInit): Promise<Response> => {
    const target = new URL(url);
    const procedure = decodeURIComponent(target.pathname.replace(/^\/trpc\//, ''));
    const raw = init.method === 'POST' ? (init.body as string) : (target.searchParams.get('input') ?? '{}');
    const input = JSON.parse(raw) as Record<string, unknown>;
    calls.push({ procedure, input, headers: new Headers(init.headers) });
    const answer = answers[procedure]?.(input) ?? { status: 404, error: { code: 'not_found', message: 'No route.' } };
    if (answer === 'network') return Promise.reject(new TypeError('fetch failed'));
    const status = answer.status ?? 200;
    const body = answer.error
      ? {
          error: { message: answer.error.message, code: -32600, data: { code: answer.error.code, httpStatus: status } },
        }
      : { result: { data: answer.data } };
    return Promise.resolve(
      new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } }),
    );
  };
  return { fetch, calls };
}

const priced = (lines: Array<{ productId: string; quantity: number }>, extra: Record<string, unknown> = {}) => ({
  data: {
    storeId: 'store1',
    currency: 'USD',
    lines: lines.map((line) => ({
      ...line,
      name: line.productId,
      unitPrice: 5,
      lineTotal: 5 * line.quantity,
      stock: null,
    })),
    removed: [],
    adjusted: [],
    subtotal: lines.reduce((sum, line) => sum + 5 * line.quantity, 0),
    itemCount: lines.reduce((sum, line) => sum + line.quantity, 0),
    ...extra,
  },
});

function client(options: Omit<Partial<ThemeClientOptions>, 'storeId' | 'subdomain'> = {}) {
  return createThemeClient({ baseUrl, storeId: 'store1', maxRetries: 0, ...options });
}

describe('the stored cart', () => {
  it('keeps product ids and quantities under svc-cart:<store>, merging a product added again', () => {
    const storage = mapStorage();
    const shop = client({ cartStorage: storage });
    expect(shop.cart.lines()).toEqual([]);
    shop.cart.add('p1', 2);
    shop.cart.add('p2');
    expect(shop.cart.add('p1', 3)).toEqual([
      { productId: 'p1', quantity: 5 },
      { productId: 'p2', quantity: 1 },
    ]);
    expect(storage.map.get('svc-cart:store1')).toBe(
      JSON.stringify([
        { productId: 'p1', quantity: 5 },
        { productId: 'p2', quantity: 1 },
      ]),
    );
    shop.cart.update('p2', 4);
    shop.cart.update('p3', 9); // not in the cart: not added
    expect(shop.cart.lines()).toEqual([
      { productId: 'p1', quantity: 5 },
      { productId: 'p2', quantity: 4 },
    ]);
    shop.cart.remove('p1');
    expect(storage.map.get('svc-cart:store1')).toBe(JSON.stringify([{ productId: 'p2', quantity: 4 }]));
    shop.cart.clear();
    // An empty cart leaves no key behind.
    expect([...storage.map.keys()]).toEqual([]);
  });

  it("keeps a recurring line's plan: chosen when added, changed by setPlan, sent with the cart and kept by load", async () => {
    const storage = mapStorage();
    const service = fakeService({
      'checkout.cart': (input) => {
        const lines = JSON.parse(input.cart as string) as Array<{
          productId: string;
          planId?: string;
          quantity: number;
        }>;
        return priced(lines.map(({ productId, quantity }) => ({ productId, quantity }))).data.lines.length > 0
          ? {
              data: {
                ...priced(lines).data,
                lines: lines.map((line) => ({
                  ...priced([line]).data.lines[0],
                  planId: line.planId ?? 'first',
                  plans: [],
                })),
              },
            }
          : priced([]);
      },
    });
    const shop = client({ cartStorage: storage, fetch: service.fetch });
    shop.cart.add('sub', 1, 'yearly');
    shop.cart.add('sub', 1);
    expect(shop.cart.lines()).toEqual([{ productId: 'sub', planId: 'yearly', quantity: 2 }]);
    expect(shop.cart.setPlan('sub', 'monthly')).toEqual([{ productId: 'sub', planId: 'monthly', quantity: 2 }]);
    shop.cart.update('sub', 3);
    expect(storage.map.get('svc-cart:store1')).toBe(
      JSON.stringify([{ productId: 'sub', planId: 'monthly', quantity: 3 }]),
    );
    shop.cart.add('once', 1);
    await shop.cart.load();
    expect(JSON.parse(service.calls[0]!.input.cart as string)).toEqual([
      { productId: 'sub', planId: 'monthly', quantity: 3 },
      { productId: 'once', quantity: 1 },
    ]);
    // The service's plan for a line that named none is kept.
    expect(shop.cart.lines()).toEqual([
      { productId: 'sub', planId: 'monthly', quantity: 3 },
      { productId: 'once', planId: 'first', quantity: 1 },
    ]);
    // A stored planId that is not a string is dropped, the line kept.
    expect(parseCartLines(JSON.stringify([{ productId: 'sub', planId: 7, quantity: 1 }]))).toEqual([
      { productId: 'sub', quantity: 1 },
    ]);
  });

  it('reads what another page (or tab) stored, and a second client of the store sees the same cart', () => {
    const storage = mapStorage({ 'svc-cart:store1': JSON.stringify([{ productId: 'p1', quantity: 2 }]) });
    const product = client({ cartStorage: storage });
    const cartPage = client({ cartStorage: storage });
    product.cart.add('p1', 1);
    expect(cartPage.cart.lines()).toEqual([{ productId: 'p1', quantity: 3 }]);
  });

  it('keeps a test cart of its own per store: svc-cart:<store>:test, by store id, else by subdomain', () => {
    const storage = mapStorage();
    client({ cartStorage: storage }).cart.add('live1');
    client({ cartStorage: storage, mode: 'test' }).cart.add('test1');
    createThemeClient({ baseUrl, subdomain: 'acme', cartStorage: storage }).cart.add('live2');
    createThemeClient({ baseUrl, subdomain: 'acme', mode: 'test', cartStorage: storage }).cart.add('test2');
    // Both given: the id (the subdomain is the store's to change).
    createThemeClient({ baseUrl, storeId: 'store1', subdomain: 'acme', cartStorage: storage }).cart.add('live1');
    expect(Object.fromEntries(storage.map)).toEqual({
      'svc-cart:store1': JSON.stringify([{ productId: 'live1', quantity: 2 }]),
      'svc-cart:store1:test': JSON.stringify([{ productId: 'test1', quantity: 1 }]),
      'svc-cart:acme': JSON.stringify([{ productId: 'live2', quantity: 1 }]),
      'svc-cart:acme:test': JSON.stringify([{ productId: 'test2', quantity: 1 }]),
    });
    expect(client({ cartStorage: storage, mode: 'live' }).cart.lines()).toEqual([{ productId: 'live1', quantity: 2 }]);
  });

  it('drops what is not a line from the stored value, and reads junk as an empty cart', () => {
    expect(parseCartLines(null)).toEqual([]);
    expect(parseCartLines('not json')).toEqual([]);
    expect(parseCartLines('{"productId":"p1","quantity":1}')).toEqual([]);
    expect(
      parseCartLines(
        JSON.stringify([
          { productId: 'p1', quantity: 1 },
          { productId: 'p2', quantity: 0 },
          { productId: 'p3', quantity: 1.5 },
          { productId: 4, quantity: 1 },
          { productId: 'p5', quantity: '2' },
          null,
          'p6',
          { productId: 'p7', quantity: 3, extra: true },
        ]),
      ),
    ).toEqual([
      { productId: 'p1', quantity: 1 },
      { productId: 'p7', quantity: 3, extra: true },
    ]);
    const shop = client({ cartStorage: mapStorage({ 'svc-cart:store1': '[{"productId":"p1"' }) });
    expect(shop.cart.lines()).toEqual([]);
    expect(shop.cart.add('p2')).toEqual([{ productId: 'p2', quantity: 1 }]);
  });

  it('refuses a quantity that is not a whole number of at least 1, and stores nothing then', () => {
    const storage = mapStorage();
    const shop = client({ cartStorage: storage });
    for (const quantity of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => shop.cart.add('p1', quantity), String(quantity)).toThrow(TypeError);
      expect(() => shop.cart.update('p1', quantity), String(quantity)).toThrow(TypeError);
    }
    expect(storage.map.size).toBe(0);
  });

  it('lasts as long as the client where the storage refuses writes, or where there is none', () => {
    const refusing = mapStorage({}, true);
    const shop = client({ cartStorage: refusing });
    shop.cart.add('p1', 2);
    shop.cart.add('p1');
    expect(shop.cart.lines()).toEqual([{ productId: 'p1', quantity: 3 }]);
    expect(refusing.map.size).toBe(0);

    const memory = client({ cartStorage: null });
    memory.cart.add('p2');
    expect(memory.cart.lines()).toEqual([{ productId: 'p2', quantity: 1 }]);
    // Node has no localStorage: the default is memory too, one cart per client.
    const server = client();
    server.cart.add('p3');
    expect(server.cart.lines()).toEqual([{ productId: 'p3', quantity: 1 }]);
    expect(client().cart.lines()).toEqual([]);
  });
});

describe('loading the cart (GET /api/v1/cart)', () => {
  it('answers null for an empty cart without a call', async () => {
    const service = fakeService({});
    const shop = client({ cartStorage: mapStorage(), fetch: service.fetch });
    expect(await shop.cart.load()).toBeNull();
    expect(service.calls).toEqual([]);
  });

  it('prices the stored lines and keeps them as the store will sell them', async () => {
    const service = fakeService({
      'checkout.cart': () =>
        priced([{ productId: 'p1', quantity: 10 }], {
          removed: [{ productId: 'gone', reason: 'unknown_product' }],
          adjusted: [{ productId: 'p1', requested: 12, quantity: 10, reason: 'stock' }],
        }),
    });
    const storage = mapStorage();
    const shop = client({ cartStorage: storage, fetch: service.fetch });
    shop.cart.add('p1', 12);
    shop.cart.add('gone');
    const cart = await shop.cart.load();
    expect(cart?.subtotal).toBe(50);
    expect(cart?.removed).toEqual([{ productId: 'gone', reason: 'unknown_product' }]);
    expect(service.calls).toHaveLength(1);
    expect(service.calls[0]!.procedure).toBe('checkout.cart');
    expect(service.calls[0]!.input).toEqual({
      storeId: 'store1',
      cart: JSON.stringify([
        { productId: 'p1', quantity: 12 },
        { productId: 'gone', quantity: 1 },
      ]),
    });
    expect(storage.map.get('svc-cart:store1')).toBe(JSON.stringify([{ productId: 'p1', quantity: 10 }]));
  });

  it('empties the stored cart when the store sells none of it', async () => {
    const service = fakeService({ 'checkout.cart': () => priced([]) });
    const storage = mapStorage();
    const shop = client({ cartStorage: storage, fetch: service.fetch });
    shop.cart.add('gone');
    expect((await shop.cart.load())?.lines).toEqual([]);
    expect(storage.map.has('svc-cart:store1')).toBe(false);
  });

  it('throws the service’s error, or the connection’s, and leaves the stored lines as they were', async () => {
    const storage = mapStorage({ 'svc-cart:store1': JSON.stringify([{ productId: 'p1', quantity: 2 }]) });
    const missing = fakeService({
      'checkout.cart': () => ({ status: 404, error: { code: 'not_found', message: 'No such store.' } }),
    });
    const failure = await client({ cartStorage: storage, fetch: missing.fetch })
      .cart.load()
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SvcNotFoundError);
    expect(failure).toMatchObject({ status: 404, code: 'not_found', message: 'No such store.' });

    const offline = fakeService({ 'checkout.cart': () => 'network' });
    const cut = await client({ cartStorage: storage, fetch: offline.fetch })
      .cart.load()
      .catch((error: unknown) => error);
    expect(cut).toBeInstanceOf(SvcConnectionError);
    expect(cut).toMatchObject({ code: 'connection_failed' });

    expect(storage.map.get('svc-cart:store1')).toBe(JSON.stringify([{ productId: 'p1', quantity: 2 }]));
  });
});

describe('the coupon and the checkout', () => {
  const coupons = (input: Record<string, unknown>): Answer =>
    input.code === 'tenoff'
      ? { data: { valid: true, code: 'TENOFF', discountType: 'percent', discountValue: 10, discount: 1 } }
      : input.code === 'down'
        ? { status: 503, error: { code: 'service_unavailable', message: 'Try again.' } }
        : { data: { valid: false, code: String(input.code), reason: 'This coupon has expired.' } };

  it('applies a valid code checked against the stored lines, and drops it on an invalid one or a failure', async () => {
    const service = fakeService({ 'coupons.validate': coupons });
    const shop = client({ cartStorage: mapStorage(), fetch: service.fetch });
    shop.cart.add('p1', 2);
    expect(shop.cart.coupon()).toBeUndefined();
    expect(await shop.cart.applyCoupon('tenoff')).toMatchObject({ valid: true, code: 'TENOFF' });
    expect(shop.cart.coupon()).toEqual({ code: 'TENOFF', discount: 1 });
    expect(service.calls[0]!.input).toEqual({
      storeId: 'store1',
      code: 'tenoff',
      cart: [{ productId: 'p1', quantity: 2 }],
    });

    expect(await shop.cart.applyCoupon('OLD')).toMatchObject({ valid: false, reason: 'This coupon has expired.' });
    expect(shop.cart.coupon()).toBeUndefined();

    await shop.cart.applyCoupon('tenoff');
    await expect(shop.cart.applyCoupon('down')).rejects.toMatchObject({ status: 503 });
    expect(shop.cart.coupon()).toBeUndefined();

    await shop.cart.applyCoupon('tenoff');
    shop.cart.removeCoupon();
    expect(shop.cart.coupon()).toBeUndefined();
  });

  it('drops the coupon when a load finds the cart empty', async () => {
    const service = fakeService({ 'coupons.validate': coupons });
    const shop = client({ cartStorage: mapStorage(), fetch: service.fetch });
    shop.cart.add('p1');
    await shop.cart.applyCoupon('tenoff');
    shop.cart.remove('p1');
    expect(await shop.cart.load()).toBeNull();
    expect(shop.cart.coupon()).toBeUndefined();
  });

  it('checks out the stored lines with the coupon (POST /api/v1/checkout, an Idempotency-Key), then empties the cart', async () => {
    const service = fakeService({
      'coupons.validate': coupons,
      'checkout.checkout': () => ({ data: { url: `${baseUrl}/checkout/o1?token=t1`, orderId: 'o1' } }),
    });
    const storage = mapStorage();
    const shop = client({ cartStorage: storage, fetch: service.fetch });
    shop.cart.add('p1', 2);
    await shop.cart.applyCoupon('tenoff');
    expect(await shop.cart.checkout()).toEqual({ url: `${baseUrl}/checkout/o1?token=t1`, orderId: 'o1' });
    const call = service.calls.at(-1)!;
    expect(call.procedure).toBe('checkout.checkout');
    expect(call.input).toEqual({
      email: null,
      cart: [{ productId: 'p1', quantity: 2 }],
      coupon: 'TENOFF',
      shopId: 'store1',
    });
    expect(call.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{32,36}$/);
    expect(shop.cart.lines()).toEqual([]);
    expect(storage.map.size).toBe(0);
    expect(shop.cart.coupon()).toBeUndefined();

    // The buyer's e-mail when the theme asked for it; no coupon when none is applied.
    shop.cart.add('p2');
    await shop.cart.checkout({ email: 'buyer@example.test' });
    expect(service.calls.at(-1)!.input).toEqual({
      email: 'buyer@example.test',
      cart: [{ productId: 'p2', quantity: 1 }],
      shopId: 'store1',
    });
  });

  it('keeps the cart and the coupon when the checkout fails', async () => {
    const service = fakeService({
      'coupons.validate': coupons,
      'checkout.checkout': () => ({ status: 409, error: { code: 'out_of_stock', message: 'Sold out.' } }),
    });
    const storage = mapStorage();
    const shop = client({ cartStorage: storage, fetch: service.fetch });
    shop.cart.add('p1', 2);
    await shop.cart.applyCoupon('tenoff');
    await expect(shop.cart.checkout()).rejects.toMatchObject({ status: 409, code: 'out_of_stock' });
    expect(shop.cart.lines()).toEqual([{ productId: 'p1', quantity: 2 }]);
    expect(shop.cart.coupon()).toEqual({ code: 'TENOFF', discount: 1 });
  });
});

describe("the buyer's billing country and VAT id", () => {
  it('prices the cart for the country set and sends both with the checkout; the checkout’s own params win', async () => {
    const service = fakeService({
      'checkout.cart': (input) =>
        priced([{ productId: 'p1', quantity: 2 }], {
          taxAmount: input.country === 'FR' ? 2 : 0,
          total: input.country === 'FR' ? 12 : 10,
          taxCountry: input.country ?? null,
        }),
      'checkout.checkout': () => ({ data: { url: `${baseUrl}/checkout/o1?token=t1`, orderId: 'o1' } }),
    });
    const shop = client({ cartStorage: mapStorage(), fetch: service.fetch });
    shop.cart.add('p1', 2);
    // None set: the service prices for the request's own country; nothing extra is sent.
    expect(shop.cart.billing()).toEqual({});
    await shop.cart.load();
    expect(service.calls.at(-1)!.input).not.toHaveProperty('country');

    shop.cart.setBilling({ country: 'FR', taxId: 'FR40303265045' });
    expect(shop.cart.billing()).toEqual({ country: 'FR', taxId: 'FR40303265045' });
    const cart = await shop.cart.load();
    expect(cart).toMatchObject({ taxAmount: 2, total: 12, taxCountry: 'FR' });
    expect(service.calls.at(-1)!.input).toMatchObject({ storeId: 'store1', country: 'FR', taxId: 'FR40303265045' });

    await shop.cart.checkout({ email: 'b2b@example.test', taxId: 'FR83404833048' });
    expect(service.calls.at(-1)!.input).toEqual({
      email: 'b2b@example.test',
      country: 'FR',
      taxId: 'FR83404833048',
      cart: [{ productId: 'p1', quantity: 2 }],
      shopId: 'store1',
    });

    // Cleared: left out again.
    shop.cart.add('p1');
    shop.cart.setBilling({});
    await shop.cart.load();
    expect(service.calls.at(-1)!.input).toEqual({
      storeId: 'store1',
      cart: JSON.stringify([{ productId: 'p1', quantity: 1 }]),
    });
  });
});
