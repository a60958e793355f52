/**
 * Buyers' sign-in to one store and their customer area, against the real database without
 * HTTP: the 6-digit code (e-mailed to the outbox, replaced by a newer one, 5 tries, single use,
 * 10 minutes on a ManualClock), the per-address budget and the rate-limit headers it writes, the
 * session (only its SHA-256 stored, 30 days, ended on logout), the Origin rule, and that a buyer
 * sees only their own orders of that store.
 *
 * Every test builds its own service context (its own config key, limiter and clock) and its
 * own stores and addresses, so no test depends on another's rows.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { requestContext, serviceContext, type RequestOptions } from '../../../../../test/support/in-process.js';
import { insertOrders } from '../../../../../test/support/orders.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { ManualClock } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import { keptMail } from '../mail/outbox.js';
import type { RateLimitRule } from '../../lib/rate-limit.js';
import type { ServiceContext } from '../request/context.js';
import { enforceRateLimit } from '../request/rate-limit.js';
import { OutboundEmailSchema } from '../mail/mail.entities.js';
import { StoreSchema } from '../stores/stores.entities.js';
import { CUSTOMER_SESSION_TTL_MS } from './customer-cookie.js';
import { CustomerCodeSchema, CustomerSchema, CustomerSessionSchema } from './customers.entities.js';
import {
  CODE_REQUESTS_PER_EMAIL,
  endCustomerSession,
  getCustomerOrder,
  listCustomerOrders,
  startCustomerLogin,
  verifyCustomerLogin,
} from './customers.service.js';
import { authenticateCustomer } from './customer-session.js';

const MINUTE = 60_000;
const CODE_TTL_MS = 10 * MINUTE;
const BASE_DOMAIN = 'shops.example';
const PUBLIC_URL = 'https://svc.example';
/** The per-client budget the `start` route's meta applies before the service runs (customers.router.ts). */
const ROUTE_CODE_LIMIT: RateLimitRule = { name: 'customer.code', max: 5, windowMs: 15 * MINUTE };

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 4 });
});
afterAll(() => orm?.close());

/** One application's worth of deps (config key, limiter, outbox mailer) on a clock the test moves. */
function setup(env: Record<string, string> = {}) {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12, 0));
  const base = serviceContext(orm, clock, { STOREFRONT_BASE_DOMAIN: BASE_DOMAIN, PUBLIC_URL, ...env });
  return { clock, base };
}

/** A request of its own (fresh EntityManager, fresh response headers), from a client address of its own. */
const request = (base: ServiceContext, opts: RequestOptions = {}) => requestContext(base, { ip: randomIp(), ...opts });
const service = (base: ServiceContext): ServiceContext => ({ ...base, em: orm.em.fork() });

function randomIp(): string {
  const [a, b, c] = randomBytes(3);
  return `10.${a}.${b}.${c}`;
}

const buyerEmail = () => `buyer-${randomBytes(5).toString('hex')}@example.test`;
/** A 6-digit code that is certainly not `code`. */
const wrongCode = (code: string) => code.replace(/\d/g, (d) => String((Number(d) + 1) % 10));

/** The mail kept for `address`, opened with the key of the context that sent it. */
const mailsTo = (base: ServiceContext, address: string) =>
  keptMail({ em: orm.em.fork(), deps: base.deps }, { to: address });
const mailCount = (address: string) => orm.em.fork().count(OutboundEmailSchema, { to: address });
const codeRows = (storeId: string, email: string) =>
  orm.em.fork().find(CustomerCodeSchema, { store: storeId, email }, { orderBy: { createdAt: 'asc' } });

/** Asks for a code (as the route would, from a new client) and reads it from the one e-mail that request sent. */
async function requestCode(base: ServiceContext, storeId: string, email: string): Promise<string> {
  const before = new Set((await mailsTo(base, email)).map((mail) => mail.id));
  await startCustomerLogin(request(base), { storeId, email });
  const sent = (await mailsTo(base, email)).filter((mail) => !before.has(mail.id));
  expect(sent).toHaveLength(1);
  const code = /\b(\d{6})\b/.exec(sent[0]!.text)?.[1];
  expect(code, 'a 6-digit code in the e-mail').toBeDefined();
  return code!;
}

const verify = (base: ServiceContext, storeId: string, email: string, code: string) =>
  verifyCustomerLogin(service(base), { storeId, email, code });

async function signIn(base: ServiceContext, storeId: string, email = buyerEmail()) {
  const code = await requestCode(base, storeId, email);
  return { email, ...(await verify(base, storeId, email, code)) };
}

const authenticate = (base: ServiceContext, customerToken: string | undefined, origin?: string) =>
  authenticateCustomer(request(base, { credentials: { customerToken }, origin }));

describe('startCustomerLogin', () => {
  it('e-mails a 6-digit code that is stored only as a hash and open for 10 minutes', async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork(), { name: 'Pixel Fonts' });
    const email = buyerEmail();
    const code = await requestCode(base, store.id, email);
    expect(code).toMatch(/^\d{6}$/);

    const [row, ...others] = await codeRows(store.id, email);
    expect(others).toEqual([]);
    expect(row).toMatchObject({ attempts: 0, usedAt: null });
    expect(row!.expiresAt.getTime() - clock.now().getTime()).toBe(CODE_TTL_MS);
    expect(row!.codeHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.codeHash).not.toContain(code);
    expect(row!.codeHash).not.toBe(sha256Hex(code)); // keyed, not a plain hash a 10^6 guess table reverses
  });

  it('refuses an unknown or banned store with not_found and sends nothing', async () => {
    const { base } = setup();
    const banned = await createStore(orm.em.fork(), { banned: true });
    const email = buyerEmail();
    await expect(startCustomerLogin(request(base), { storeId: newId(), email })).rejects.toMatchObject({
      appCode: 'not_found',
    });
    await expect(startCustomerLogin(request(base), { storeId: banned.id, email })).rejects.toMatchObject({
      appCode: 'not_found',
    });
    expect(await mailCount(email)).toBe(0);
    expect(await codeRows(banned.id, email)).toEqual([]);
  });

  it('a new code replaces the earlier open one, also when two are requested at once', async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const email = buyerEmail();
    const first = await requestCode(base, store.id, email);
    let second: string;
    do second = await requestCode(base, store.id, email);
    while (second === first); // one chance in a million that the draw repeats

    await expect(verify(base, store.id, email, first)).rejects.toMatchObject({ appCode: 'token_invalid' });
    await expect(verify(base, store.id, email, second)).resolves.toMatchObject({ customer: { email } });

    const racing = buyerEmail();
    await Promise.all([1, 2, 3].map(() => startCustomerLogin(request(base), { storeId: store.id, email: racing })));
    const rows = await codeRows(store.id, racing);
    expect(rows).toHaveLength(3);
    expect(rows.filter((row) => row.usedAt === null)).toHaveLength(1);
  });

  it('sends at most 5 codes per address and store in 15 minutes, then rate_limited with the address budget in the headers', async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    const other = await createStore(orm.em.fork());
    const email = buyerEmail();
    expect(CODE_REQUESTS_PER_EMAIL).toMatchObject({ max: 5, windowMs: 15 * MINUTE });
    const start = clock.now().getTime();
    // Each from another client: the per-client limit never bites, only the address's.
    for (let n = 0; n < 5; n++) {
      await startCustomerLogin(request(base), { storeId: store.id, email });
      clock.advance(MINUTE);
    }
    const limited = request(base);
    await expect(startCustomerLogin(limited, { storeId: store.id, email })).rejects.toMatchObject({
      appCode: 'rate_limited',
    });
    // The oldest request leaves the window 15 minutes after it was made: 10 minutes from now.
    expect(limited.answer.headers).toMatchObject({
      'X-RateLimit-Limit': '5',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '600',
      'Retry-After': '600',
      'RateLimit-Policy': '"customer.code.email";q=5;w=900',
      RateLimit: '"customer.code.email";r=0;t=600',
    });
    expect(await mailCount(email)).toBe(5);
    expect(await codeRows(store.id, email)).toHaveLength(5);

    // Another store's budget for the same address is its own.
    await startCustomerLogin(request(base), { storeId: other.id, email });
    // One millisecond before the first request leaves the window: still limited; then one more is allowed.
    clock.set(start + 15 * MINUTE - 1);
    await expect(startCustomerLogin(request(base), { storeId: store.id, email })).rejects.toMatchObject({
      appCode: 'rate_limited',
    });
    clock.set(start + 15 * MINUTE);
    await startCustomerLogin(request(base), { storeId: store.id, email });
    expect(await mailCount(email)).toBe(7);
  });

  it('leaves the headers to whichever budget (per client or per address) has less left', async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const startAsRoute = async (ip: string, email: string) => {
      const ctx = request(base, { ip });
      await enforceRateLimit(ctx, ROUTE_CODE_LIMIT);
      await startCustomerLogin(ctx, { storeId: store.id, email });
      return ctx.answer.headers;
    };

    // One address from new clients: each client has 4 left; the address has 4, 3, 2, 1, 0.
    const email = buyerEmail();
    const first = await startAsRoute(randomIp(), email);
    expect(first).toMatchObject({ 'X-RateLimit-Remaining': '4', 'RateLimit-Policy': '"customer.code";q=5;w=900' });
    for (const left of [3, 2, 1, 0]) {
      const headers = await startAsRoute(randomIp(), email);
      expect(headers).toMatchObject({
        'X-RateLimit-Limit': '5',
        'X-RateLimit-Remaining': String(left),
        'RateLimit-Policy': '"customer.code.email";q=5;w=900',
        RateLimit: `"customer.code.email";r=${left};t=900`,
      });
      expect(headers['Retry-After']).toBeUndefined();
    }

    // One client for new addresses: the client has 4, 3, 2, 1, 0 left; each address 4.
    const ip = randomIp();
    for (const left of [4, 3, 2, 1, 0]) {
      const headers = await startAsRoute(ip, buyerEmail());
      expect(headers).toMatchObject({
        'X-RateLimit-Remaining': String(left),
        'RateLimit-Policy': '"customer.code";q=5;w=900',
      });
    }
  });
});

describe('verifyCustomerLogin', () => {
  it('refuses a wrong code with token_invalid; the right one signs in', async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const email = buyerEmail();
    const code = await requestCode(base, store.id, email);
    await expect(verify(base, store.id, email, wrongCode(code))).rejects.toMatchObject({ appCode: 'token_invalid' });
    // The right code for another address, or for another store, is wrong too.
    await expect(verify(base, store.id, buyerEmail(), code)).rejects.toMatchObject({ appCode: 'token_invalid' });
    const other = await createStore(orm.em.fork());
    await expect(verify(base, other.id, email, code)).rejects.toMatchObject({ appCode: 'token_invalid' });
    const { customer } = await verify(base, store.id, email, code);
    expect(customer).toMatchObject({ storeId: store.id, email });
  });

  it('allows 5 tries: the right code on the 5th works, on the 6th it is burnt', async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());

    const lucky = buyerEmail();
    const luckyCode = await requestCode(base, store.id, lucky);
    for (let n = 0; n < 4; n++)
      await expect(verify(base, store.id, lucky, wrongCode(luckyCode))).rejects.toMatchObject({
        appCode: 'token_invalid',
      });
    await expect(verify(base, store.id, lucky, luckyCode)).resolves.toMatchObject({ customer: { email: lucky } });

    const email = buyerEmail();
    const code = await requestCode(base, store.id, email);
    for (let n = 0; n < 5; n++)
      await expect(verify(base, store.id, email, wrongCode(code))).rejects.toMatchObject({ appCode: 'token_invalid' });
    await expect(verify(base, store.id, email, code)).rejects.toMatchObject({ appCode: 'token_invalid' });
    expect(await orm.em.fork().count(CustomerSchema, { store: store.id, email })).toBe(0);
  });

  it('counts tries made in parallel: 8 wrong guesses at once burn the code', async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const email = buyerEmail();
    const code = await requestCode(base, store.id, email);
    const guesses = await Promise.allSettled(
      Array.from({ length: 8 }, () => verify(base, store.id, email, wrongCode(code))),
    );
    expect(guesses.every((g) => g.status === 'rejected')).toBe(true);
    await expect(verify(base, store.id, email, code)).rejects.toMatchObject({ appCode: 'token_invalid' });
  });

  it('a code works once, also when sent several times at the same moment', async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const email = buyerEmail();
    const code = await requestCode(base, store.id, email);
    await verify(base, store.id, email, code);
    await expect(verify(base, store.id, email, code)).rejects.toMatchObject({ appCode: 'token_invalid' });

    const racing = buyerEmail();
    const racingCode = await requestCode(base, store.id, racing);
    // Within the 5 tries, so only single use can refuse any of them.
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => verify(base, store.id, racing, racingCode)),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const refused of results.filter((r) => r.status === 'rejected'))
      expect(refused).toMatchObject({ reason: { appCode: 'token_invalid' } });
    const [customer] = await orm.em.fork().find(CustomerSchema, { store: store.id, email: racing });
    expect(await orm.em.fork().count(CustomerSessionSchema, { customer: customer!.id })).toBe(1);
  });

  it('a code expires 10 minutes after it was sent', async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    const early = buyerEmail();
    const late = buyerEmail();
    const earlyCode = await requestCode(base, store.id, early);
    const lateCode = await requestCode(base, store.id, late);
    clock.advance(CODE_TTL_MS - 1);
    await expect(verify(base, store.id, early, earlyCode)).resolves.toMatchObject({ customer: { email: early } });
    clock.advance(1);
    await expect(verify(base, store.id, late, lateCode)).rejects.toMatchObject({ appCode: 'token_invalid' });
  });

  it('returns a session token and stores only its SHA-256; signing in again is the same customer', async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    const first = await signIn(base, store.id);
    expect(first.token.length).toBeGreaterThanOrEqual(43); // 32 random bytes
    expect(first.customer).toMatchObject({
      storeId: store.id,
      email: first.email,
      createdAt: clock.now().toISOString(),
    });

    const sessions = await orm.em.fork().find(CustomerSessionSchema, { customer: first.customer.id });
    expect(sessions.map((s) => s.idHash)).toEqual([sha256Hex(first.token)]);
    expect(sessions[0]!.expiresAt.getTime() - clock.now().getTime()).toBe(CUSTOMER_SESSION_TTL_MS);
    const rows: unknown[] = await orm.em
      .fork()
      .execute('select * from customer_session where customer_id = ?', [first.customer.id]);
    expect(JSON.stringify(rows)).not.toContain(first.token);

    clock.advance(MINUTE);
    const again = await signIn(base, store.id, first.email);
    expect(again.customer.id).toBe(first.customer.id);
    expect(again.token).not.toBe(first.token);
    const customer = await orm.em.fork().findOneOrFail(CustomerSchema, { id: first.customer.id });
    expect(customer.lastLoginAt).toEqual(clock.now());
  });

  it('refuses an unknown store, and a store banned after the code was sent, with not_found', async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const email = buyerEmail();
    const code = await requestCode(base, store.id, email);
    await expect(verify(base, newId(), email, code)).rejects.toMatchObject({ appCode: 'not_found' });
    await orm.em.fork().nativeUpdate(StoreSchema, { id: store.id }, { banned: true });
    await expect(verify(base, store.id, email, code)).rejects.toMatchObject({ appCode: 'not_found' });
  });
});

describe('authenticateCustomer', () => {
  it('is unauthorized without a token and with a token it never issued', async () => {
    const { base } = setup();
    await expect(authenticate(base, undefined)).rejects.toMatchObject({ appCode: 'unauthorized' });
    await expect(authenticate(base, randomBytes(32).toString('base64url'))).rejects.toMatchObject({
      appCode: 'unauthorized',
    });
  });

  it('accepts the session for 30 days, then it is unauthorized', async () => {
    const { clock, base } = setup();
    const store = await createStore(orm.em.fork());
    const { token, customer } = await signIn(base, store.id);
    await expect(authenticate(base, token)).resolves.toMatchObject({ id: customer.id });
    clock.advance(CUSTOMER_SESSION_TTL_MS - 1);
    await expect(authenticate(base, token)).resolves.toMatchObject({ id: customer.id });
    clock.advance(1);
    await expect(authenticate(base, token)).rejects.toMatchObject({ appCode: 'unauthorized' });
  });

  it('closes the sessions of a store that is banned, not only its new sign-ins (store_banned)', async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const { token } = await signIn(base, store.id);
    await orm.em.fork().nativeUpdate(StoreSchema, { id: store.id }, { banned: true });
    await expect(authenticate(base, token)).rejects.toMatchObject({ appCode: 'store_banned' });
  });

  it("takes requests from the store's own origins and the service's, and store_forbidden from any other", async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const neighbour = await createStore(orm.em.fork());
    await orm.em.fork().nativeUpdate(StoreSchema, { id: store.id }, { allowedOrigins: ['https://theme.example.com'] });
    await orm.em
      .fork()
      .nativeUpdate(StoreSchema, { id: neighbour.id }, { allowedOrigins: ['https://neighbour.example.com'] });
    const { token, customer } = await signIn(base, store.id);

    for (const origin of [
      undefined,
      PUBLIC_URL,
      'https://theme.example.com',
      `https://${store.subdomain}.${BASE_DOMAIN}`,
    ]) {
      await expect(authenticate(base, token, origin), String(origin)).resolves.toMatchObject({ id: customer.id });
    }
    for (const origin of [
      `https://${neighbour.subdomain}.${BASE_DOMAIN}`,
      'https://neighbour.example.com',
      `http://${store.subdomain}.${BASE_DOMAIN}`,
      `https://${store.subdomain}.${BASE_DOMAIN}.evil.example`,
      'http://theme.example.com',
      'https://evil.example',
      'null',
    ]) {
      await expect(authenticate(base, token, origin), origin).rejects.toMatchObject({ appCode: 'store_forbidden' });
    }

    // Without STOREFRONT_BASE_DOMAIN the store has no subdomain origin.
    const { base: bare } = setup({ STOREFRONT_BASE_DOMAIN: '' });
    await expect(authenticate(bare, token, `https://${store.subdomain}.${BASE_DOMAIN}`)).rejects.toMatchObject({
      appCode: 'store_forbidden',
    });
    await expect(authenticate(bare, token, 'https://theme.example.com')).resolves.toMatchObject({ id: customer.id });
  });

  it('endCustomerSession ends that session only', async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const laptop = await signIn(base, store.id);
    const phone = await signIn(base, store.id, laptop.email);
    await endCustomerSession(request(base), laptop.token);
    await expect(authenticate(base, laptop.token)).rejects.toMatchObject({ appCode: 'unauthorized' });
    expect(await orm.em.fork().count(CustomerSessionSchema, { idHash: sha256Hex(laptop.token) })).toBe(0);
    await expect(authenticate(base, phone.token)).resolves.toMatchObject({ id: phone.customer.id });
    // No token: nothing to end, no error.
    await endCustomerSession(request(base), undefined);
    await expect(authenticate(base, phone.token)).resolves.toMatchObject({ id: phone.customer.id });
  });

  it("endCustomerSession takes the store's own origins and the service's, and store_forbidden from another store's", async () => {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const neighbour = await createStore(orm.em.fork());
    await orm.em.fork().nativeUpdate(StoreSchema, { id: store.id }, { allowedOrigins: ['https://theme.example.com'] });
    // Any store may claim any origin: the neighbour claims one it does not own.
    await orm.em
      .fork()
      .nativeUpdate(StoreSchema, { id: neighbour.id }, { allowedOrigins: ['https://neighbour.example.com'] });
    const end = (token: string, origin: string | undefined) => endCustomerSession(request(base, { origin }), token);

    const buyer = await signIn(base, store.id);
    for (const origin of [`https://${neighbour.subdomain}.${BASE_DOMAIN}`, 'https://neighbour.example.com', 'null']) {
      await expect(end(buyer.token, origin), origin).rejects.toMatchObject({ appCode: 'store_forbidden' });
    }
    // The session is still open.
    await expect(authenticate(base, buyer.token)).resolves.toMatchObject({ id: buyer.customer.id });
    expect(await orm.em.fork().count(CustomerSessionSchema, { idHash: sha256Hex(buyer.token) })).toBe(1);

    for (const origin of [
      undefined,
      PUBLIC_URL,
      'https://theme.example.com',
      `https://${store.subdomain}.${BASE_DOMAIN}`,
    ]) {
      const session = await signIn(base, store.id, buyer.email);
      await end(session.token, origin);
      await expect(authenticate(base, session.token), String(origin)).rejects.toMatchObject({
        appCode: 'unauthorized',
      });
    }
  });
});

describe("the buyer's orders", () => {
  async function buyerWithOrders() {
    const { base } = setup();
    const store = await createStore(orm.em.fork());
    const elsewhere = await createStore(orm.em.fork());
    const { token, email } = await signIn(base, store.id);
    const customer = await authenticate(base, token);
    const at = (minutes: number) => new Date(Date.UTC(2026, 4, 1) + minutes * MINUTE);
    const mine = await insertOrders(workerDatabaseUrl(), store.id, [
      { customerEmail: email, createdAt: at(1), status: 'completed' },
      { customerEmail: email, createdAt: at(2) },
      {
        customerEmail: email,
        createdAt: at(3),
        lines: [{ productName: 'Icon Pack', quantity: 2, unitPriceMinor: 500 }],
      },
    ]);
    const [someoneElses] = await insertOrders(workerDatabaseUrl(), store.id, [
      { customerEmail: buyerEmail(), createdAt: at(4) },
    ]);
    const [otherStore] = await insertOrders(workerDatabaseUrl(), elsewhere.id, [
      { customerEmail: email, createdAt: at(5) },
    ]);
    return { base, store, customer, mine, someoneElses: someoneElses!, otherStore: otherStore! };
  }

  it('lists only this buyer’s orders of this store, newest first, page by page', async () => {
    const { base, store, customer, mine } = await buyerWithOrders();
    const all = await listCustomerOrders(service(base), customer, {});
    expect(all.orders.map((o) => o.id)).toEqual(mine.map((o) => o.id).reverse());
    expect(all).toMatchObject({ hasMore: false, nextCursor: null });
    expect(all.orders.every((o) => o.storeId === store.id)).toBe(true);
    expect(all.orders[0]).toMatchObject({
      productName: 'Icon Pack',
      lines: [{ productName: 'Icon Pack', quantity: 2, unitPrice: 5 }],
    });

    const first = await listCustomerOrders(service(base), customer, { limit: 2 });
    expect(first.orders.map((o) => o.id)).toEqual([mine[2]!.id, mine[1]!.id]);
    expect(first.hasMore).toBe(true);
    const second = await listCustomerOrders(service(base), customer, { limit: 2, cursor: first.nextCursor! });
    expect(second.orders.map((o) => o.id)).toEqual([mine[0]!.id]);
    expect(second).toMatchObject({ hasMore: false, nextCursor: null });
  });

  it("shows one of this buyer's orders by id or number, and not_found for anyone else's or another store's", async () => {
    const { base, customer, mine, someoneElses, otherStore } = await buyerWithOrders();
    await expect(getCustomerOrder(service(base), customer, mine[0]!.id)).resolves.toMatchObject({
      id: mine[0]!.id,
      status: 'completed',
    });
    await expect(getCustomerOrder(service(base), customer, `ORD-${mine[1]!.number}`)).resolves.toMatchObject({
      id: mine[1]!.id,
    });
    await expect(getCustomerOrder(service(base), customer, someoneElses.id)).rejects.toMatchObject({
      appCode: 'not_found',
    });
    await expect(getCustomerOrder(service(base), customer, `ORD-${someoneElses.number}`)).rejects.toMatchObject({
      appCode: 'not_found',
    });
    await expect(getCustomerOrder(service(base), customer, otherStore.id)).rejects.toMatchObject({
      appCode: 'not_found',
    });
    await expect(getCustomerOrder(service(base), customer, newId())).rejects.toMatchObject({ appCode: 'not_found' });
  });
});
