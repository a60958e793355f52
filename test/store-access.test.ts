/**
 * Black-box: one declaration per operation for both audiences (storeAccess, docs/decisions.md).
 * A store operation takes a merchant key with its scope or a member's session with its
 * permission. REST binds each of its two paths to one credential, as when they were two
 * procedures: the merchant path reads only the key (a session cookie there is no credential),
 * the dashboard path only the session (a Bearer key there is refused), with CSRF on a session's
 * unsafe call. /trpc takes either. The call's mode is the credential's: the key's own, or the
 * session's X-Svc-Mode.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addStaff, createKeyFor, createStoreFor, dashboard, registerSeller, type Seller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
let owner: Seller;
let staff: Seller;
let storeId: string;
const keys: Record<'live' | 'test' | 'noScope', string> = { live: '', test: '', noScope: '' };

beforeAll(async () => {
  server = await startServer();
  owner = await registerSeller(server.url);
  storeId = (await createStoreFor(owner)).id;
  const scopes = ['coupon:read', 'coupon:write'];
  keys.live = (await createKeyFor(owner, { scopes, storeIds: [storeId] })).key;
  keys.test = (await createKeyFor(owner, { scopes, storeIds: [storeId], mode: 'test' })).key;
  keys.noScope = (await createKeyFor(owner, { scopes: ['order:read'], storeIds: [storeId] })).key;
  // A member without manageProducts, which coupons need.
  staff = await registerSeller(server.url);
  await addStaff(owner, storeId, staff, ['viewOrders']);
});

afterAll(() => server?.stop());

const merchantPath = () => `/api/merchant/v1/stores/${storeId}/coupons`;
const dashboardPath = () => `/api/dashboard/stores/${storeId}/coupons`;
const coupon = () => ({ code: `C${randomBytes(5).toString('hex')}`, discountType: 'percent', discountValue: 10 });

interface Credentials {
  key?: string;
  session?: Seller;
  csrf?: boolean;
  mode?: string;
}

function headersOf({ key, session, csrf, mode }: Credentials): Record<string, string> {
  const headers: Record<string, string> = {};
  if (key) headers.authorization = `Bearer ${key}`;
  if (session) headers.cookie = session.cookie;
  if (session && csrf) headers['x-csrf-token'] = session.csrfToken;
  if (mode) headers['x-svc-mode'] = mode;
  return headers;
}

function rest(method: string, path: string, credentials: Credentials, body?: unknown): Promise<Response> {
  const headers = headersOf(credentials);
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${server.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** A /trpc call: a query by GET with its input in the query string, a mutation by POST with it as the body. */
async function trpc(
  type: 'query' | 'mutation',
  name: string,
  input: unknown,
  credentials: Credentials,
): Promise<{ status: number; headers: Headers; data?: Record<string, unknown>; code?: string }> {
  const headers = headersOf(credentials);
  const response =
    type === 'query'
      ? await fetch(`${server.url}/trpc/${name}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers })
      : await fetch(`${server.url}/trpc/${name}`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify(input),
        });
  const body = await response.json();
  return { status: response.status, headers: response.headers, data: body.result?.data, code: body.error?.data?.code };
}

describe('the merchant path reads only the key', () => {
  it('answers a session cookie alone with 401 and the Bearer challenge, on reads and writes', async () => {
    const read = await rest('GET', merchantPath(), { session: owner });
    expect(read.status).toBe(401);
    expect(await read.json()).toEqual({ error: 'Send Authorization: Bearer <API key>.', code: 'unauthorized' });
    expect(read.headers.get('www-authenticate')).toBe('Bearer realm="svc"');
    const write = await rest('POST', merchantPath(), { session: owner, csrf: true }, coupon());
    expect(write.status).toBe(401);
    expect((await write.json()).code).toBe('unauthorized');
  });

  it('lets the key decide when a session cookie comes with it', async () => {
    const refused = await rest('GET', merchantPath(), { key: keys.noScope, session: owner });
    expect(refused.status).toBe(403);
    expect((await refused.json()).code).toBe('scope_missing');
    const allowed = await rest('GET', merchantPath(), { key: keys.live, session: staff });
    expect(allowed.status).toBe(200);
    // The per-key budget is spent on the merchant path.
    expect(allowed.headers.get('x-ratelimit-limit')).toBe('300');
  });
});

describe('the dashboard path reads only the session', () => {
  it('answers a Bearer key alone with 401 and no challenge, on reads and writes', async () => {
    const read = await rest('GET', dashboardPath(), { key: keys.live });
    expect(read.status).toBe(401);
    expect(await read.json()).toEqual({
      error: 'Dashboard routes take the session cookie, not a Bearer key.',
      code: 'unauthorized',
    });
    expect(read.headers.get('www-authenticate')).toBeNull();
    const write = await rest('POST', dashboardPath(), { key: keys.live }, coupon());
    expect(write.status).toBe(401);
    expect((await write.json()).code).toBe('unauthorized');
  });

  it('refuses a Bearer key beside the session cookie too, and spends no per-key budget', async () => {
    const both = await rest('GET', dashboardPath(), { key: keys.live, session: owner });
    expect(both.status).toBe(401);
    expect((await both.json()).code).toBe('unauthorized');
    const session = await rest('GET', dashboardPath(), { session: owner });
    expect(session.status).toBe(200);
    expect(session.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it("checks the member's permission, not a scope", async () => {
    const response = await rest('GET', dashboardPath(), { session: staff });
    expect(response.status).toBe(403);
    expect((await response.json()).code).toBe('permission_missing');
  });
});

describe('/trpc takes either credential', () => {
  it('answers the same list to the key and to the session', async () => {
    expect((await rest('POST', merchantPath(), { key: keys.live }, coupon())).status).toBe(201);
    const byKey = await trpc('query', 'coupons.list', { storeId }, { key: keys.live });
    const bySession = await trpc('query', 'coupons.list', { storeId }, { session: owner });
    expect(byKey.status).toBe(200);
    expect(bySession.status).toBe(200);
    expect((byKey.data!.coupons as unknown[]).length).toBeGreaterThan(0);
    expect(bySession.data).toEqual(byKey.data);
    // The key's call spends its budget; the session's does not.
    expect(byKey.headers.get('x-ratelimit-limit')).toBe('300');
    expect(bySession.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('refuses no credential, a key without the scope and a member without the permission, each with its own code', async () => {
    expect(await trpc('query', 'coupons.list', { storeId }, {})).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(await trpc('query', 'coupons.list', { storeId }, { key: keys.noScope })).toMatchObject({
      status: 403,
      code: 'scope_missing',
    });
    expect(await trpc('query', 'coupons.list', { storeId }, { session: staff })).toMatchObject({
      status: 403,
      code: 'permission_missing',
    });
  });

  it('reads the key when a request carries both (a Bearer request is never a cookie session)', async () => {
    expect(await trpc('query', 'coupons.list', { storeId }, { key: keys.noScope, session: owner })).toMatchObject({
      status: 403,
      code: 'scope_missing',
    });
  });
});

describe("a session's unsafe call needs the CSRF token", () => {
  it('on /trpc', async () => {
    const without = await trpc('mutation', 'coupons.create', { storeId, ...coupon() }, { session: owner });
    expect(without).toMatchObject({ status: 403, code: 'csrf_failed' });
    const withToken = await trpc(
      'mutation',
      'coupons.create',
      { storeId, ...coupon() },
      { session: owner, csrf: true },
    );
    expect(withToken.status).toBe(200);
    // A key's call reads no session: it needs no token.
    expect((await trpc('mutation', 'coupons.create', { storeId, ...coupon() }, { key: keys.live })).status).toBe(200);
  });

  it('on the dashboard path', async () => {
    const without = await rest('POST', dashboardPath(), { session: owner }, coupon());
    expect(without.status).toBe(403);
    expect((await without.json()).code).toBe('csrf_failed');
    expect((await rest('POST', dashboardPath(), { session: owner, csrf: true }, coupon())).status).toBe(201);
  });
});

describe('the mode follows the credential', () => {
  it("is the key's on /trpc (X-Svc-Mode ignored) and the session's X-Svc-Mode", async () => {
    const made = async (credentials: Credentials) => {
      const result = await trpc('mutation', 'coupons.create', { storeId, ...coupon() }, credentials);
      expect(result.status, JSON.stringify(result)).toBe(200);
      return result.data as { id: string; livemode: boolean };
    };
    expect((await made({ key: keys.test })).livemode).toBe(false);
    expect((await made({ key: keys.live, mode: 'test' })).livemode).toBe(true);
    expect((await made({ session: owner, csrf: true })).livemode).toBe(true);
    const test = await made({ session: owner, csrf: true, mode: 'test' });
    expect(test.livemode).toBe(false);

    // The test coupon is the test world's on both paths: the test key and the session in test mode see it.
    const one = (path: string) => `${path}/${test.id}`;
    expect((await rest('GET', one(merchantPath()), { key: keys.test })).status).toBe(200);
    expect((await rest('GET', one(merchantPath()), { key: keys.live, mode: 'test' })).status).toBe(404);
    expect((await rest('GET', one(dashboardPath()), { session: owner, mode: 'test' })).status).toBe(200);
    expect((await rest('GET', one(dashboardPath()), { session: owner })).status).toBe(404);
  });

  it('refuses a session mode that is neither live nor test, on /trpc as on the dashboard path', async () => {
    expect(await trpc('query', 'coupons.list', { storeId }, { session: owner, mode: 'Test ' })).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
    const response = await rest('GET', dashboardPath(), { session: owner, mode: 'Test ' });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toBe('X-Svc-Mode must be live or test.');
  });
});

describe('the dashboard path answers as its own procedure did', () => {
  it('takes the same writes as the merchant path (201, 200, 204) under the session', async () => {
    const created = await dashboard(owner, 'POST', dashboardPath(), coupon());
    expect(created.status).toBe(201);
    const { id } = await created.json();
    const changed = await dashboard(owner, 'PATCH', `${dashboardPath()}/${id}`, { discountValue: 20 });
    expect(changed.status).toBe(200);
    expect((await changed.json()).discountValue).toBe(20);
    expect((await dashboard(owner, 'DELETE', `${dashboardPath()}/${id}`)).status).toBe(204);
    expect((await dashboard(owner, 'GET', `${dashboardPath()}/${id}`)).status).toBe(404);
  });
});
