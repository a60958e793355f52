/** Black-box: seller accounts, sessions, CSRF, password reset, stores and staff permissions. */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addStaff,
  clientIp,
  createKeyFor,
  createStoreFor,
  dashboard,
  registerSeller,
  sessionCookieFrom,
  uniqueEmail,
} from './support/seller.js';
import { startServer } from './support/server.js';
import { startSmtpListener } from './support/smtp.js';

let server: Awaited<ReturnType<typeof startServer>>;
let smtp: Awaited<ReturnType<typeof startSmtpListener>>;

beforeAll(async () => {
  smtp = await startSmtpListener();
  server = await startServer({ SMTP_URL: smtp.url });
});
afterAll(async () => {
  await server?.stop();
  await smtp?.stop();
});

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp(), ...headers },
    body: JSON.stringify(body),
  });
}

describe('register and login', () => {
  it('registers with 201, a session cookie and a CSRF token; refuses the same e-mail twice', async () => {
    const email = uniqueEmail();
    const response = await post('/api/auth/register', { email: email.toUpperCase(), password: 'long enough pw' });
    expect(response.status).toBe(201);
    const body = await response.json();
    expect(body).toEqual({
      user: { id: expect.any(String), email, name: null, createdAt: expect.any(String) },
      csrfToken: expect.any(String),
    });
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Max-Age=2592000/);
    expect(cookie).not.toMatch(/Secure/); // only in production

    const again = await post('/api/auth/register', { email, password: 'another long pw' });
    expect(again.status).toBe(409);
    expect((await again.json()).code).toBe('conflict');
  });

  it('refuses a short password and a bad e-mail with 400', async () => {
    expect((await post('/api/auth/register', { email: uniqueEmail(), password: 'short' })).status).toBe(400);
    expect((await post('/api/auth/register', { email: 'not-an-email', password: 'long enough pw' })).status).toBe(400);
  });

  it('answers a wrong password and an unknown e-mail alike', async () => {
    const seller = await registerSeller(server.url);
    const wrong = await post('/api/auth/login', { email: seller.email, password: 'wrong password' });
    const unknown = await post('/api/auth/login', { email: uniqueEmail('nobody'), password: 'wrong password' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(await wrong.json()).toEqual(await unknown.json());
  });

  it('logs in, reads the session, logs out, and the old cookie is dead', async () => {
    const seller = await registerSeller(server.url);
    const login = await post('/api/auth/login', { email: seller.email, password: seller.password });
    expect(login.status).toBe(200);
    const cookie = sessionCookieFrom(login);
    const { csrfToken } = await login.json();

    const session = await fetch(`${server.url}/api/auth/session`, { headers: { cookie } });
    expect(session.status).toBe(200);
    expect(await session.json()).toEqual({ user: expect.objectContaining({ email: seller.email }), csrfToken });

    const logout = await fetch(`${server.url}/api/auth/logout`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrfToken },
    });
    expect(logout.status).toBe(204);
    expect(logout.headers.getSetCookie().some((c) => c.startsWith('svc_session=;') && c.includes('Max-Age=0'))).toBe(
      true,
    );
    expect((await fetch(`${server.url}/api/auth/session`, { headers: { cookie } })).status).toBe(401);
  });

  it('limits logins to 20 per 15 minutes per client', async () => {
    const ip = clientIp();
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) {
      statuses.push(
        (await post('/api/auth/login', { email: uniqueEmail(), password: 'whatever pw' }, { 'x-forwarded-for': ip }))
          .status,
      );
    }
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses[20]).toBe(429);
  });

  it('limits sign-in attempts on one account to 10 per 15 minutes from any addresses; past them the right password needs an e-mailed code', async () => {
    const seller = await registerSeller(server.url);
    const codes: string[] = [];
    // Each guess from an address of its own: the per-address budget never comes into it.
    for (let i = 0; i < 12; i++) {
      const guess = await post('/api/auth/login', { email: seller.email, password: `guess ${i}` });
      expect(guess.status).toBe(401);
      codes.push((await guess.json()).code);
    }
    expect(codes).toEqual([
      ...Array<string>(10).fill('unauthorized'),
      'sign_in_code_required',
      'sign_in_code_required',
    ]);
    const mailsBefore = smtp.mails.length;
    const right = await post('/api/auth/login', { email: seller.email.toUpperCase(), password: seller.password });
    expect(right.status).toBe(401);
    expect(await right.json()).toMatchObject({ code: 'sign_in_code_required' });
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(right.headers.get('ratelimit-policy')).toContain('"auth.login.account";q=10;w=900');
    expect(right.headers.get('set-cookie')).toBeNull();
    // The right password mailed a code (the guesses did not); with it, the password signs in.
    const mail = await smtp.waitFor((m) => m.to.includes(seller.email) && m.subject === 'Your svc sign-in code');
    expect(smtp.mails.slice(mailsBefore).filter((m) => m.to.includes(seller.email))).toHaveLength(1);
    const code = /enter this code with your password: (\d{6})/.exec(mail.text)![1];
    const withCode = await post('/api/auth/login', { email: seller.email, password: seller.password, code });
    expect(withCode.status).toBe(200);
    expect(sessionCookieFrom(withCode)).toMatch(/^svc_session=/);
    // Another account is not held back by this one's window.
    const other = await registerSeller(server.url);
    expect((await post('/api/auth/login', { email: other.email, password: other.password })).status).toBe(200);
  });

  it('lets the new password in at once after a completed reset, however many guesses came before', async () => {
    const seller = await registerSeller(server.url);
    for (let i = 0; i < 11; i++) await post('/api/auth/login', { email: seller.email, password: `guess ${i}` });
    expect((await (await post('/api/auth/login', { email: seller.email, password: 'guess' })).json()).code).toBe(
      'sign_in_code_required',
    );
    expect((await post('/api/auth/forgot', { email: seller.email })).status).toBe(204);
    const mail = await smtp.waitFor((m) => m.to.includes(seller.email) && m.subject === 'Reset your svc password');
    const token = /token=([A-Za-z0-9_-]+)/.exec(mail.text)![1];
    expect((await post('/api/auth/reset', { token, password: 'a brand new password' })).status).toBe(204);
    const login = await post('/api/auth/login', { email: seller.email, password: 'a brand new password' });
    expect(login.status).toBe(200);
  });

  it('clears an account’s window when it signs in, so a seller who mistypes now and then is never held back', async () => {
    const seller = await registerSeller(server.url);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 9; i++) {
        expect((await post('/api/auth/login', { email: seller.email, password: 'mistyped' })).status).toBe(401);
      }
      expect((await post('/api/auth/login', { email: seller.email, password: seller.password })).status).toBe(200);
    }
  });

  it('limits registrations to 3 per hour per client', async () => {
    const ip = clientIp();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push(
        (
          await post(
            '/api/auth/register',
            { email: uniqueEmail(), password: 'long enough pw' },
            { 'x-forwarded-for': ip },
          )
        ).status,
      );
    }
    expect(statuses).toEqual([201, 201, 201, 429]);
  });
});

describe('CSRF', () => {
  it('refuses a cookie-authenticated unsafe request without the token, or with a wrong one', async () => {
    const seller = await registerSeller(server.url);
    const body = JSON.stringify({ name: 'Shop', subdomain: `csrf-${Date.now().toString(36)}` });
    const headers = { cookie: seller.cookie, 'content-type': 'application/json' };
    const without = await fetch(`${server.url}/api/dashboard/stores`, { method: 'POST', headers, body });
    expect(without.status).toBe(403);
    expect((await without.json()).code).toBe('csrf_failed');
    const wrong = await fetch(`${server.url}/api/dashboard/stores`, {
      method: 'POST',
      headers: { ...headers, 'x-csrf-token': 'nope' },
      body,
    });
    expect(wrong.status).toBe(403);
    const right = await fetch(`${server.url}/api/dashboard/stores`, {
      method: 'POST',
      headers: { ...headers, 'x-csrf-token': seller.csrfToken },
      body,
    });
    expect(right.status).toBe(201);
  });

  it('enforces it on /trpc mutations too', async () => {
    const seller = await registerSeller(server.url);
    const response = await fetch(`${server.url}/trpc/stores.create`, {
      method: 'POST',
      headers: { cookie: seller.cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Shop', subdomain: `trpc-${Date.now().toString(36)}` }),
    });
    expect(response.status).toBe(403);
    expect((await response.json()).error.data.code).toBe('csrf_failed');
  });

  it('needs no token for safe methods; logout, an unsafe call on the session, needs it', async () => {
    const seller = await registerSeller(server.url);
    expect((await fetch(`${server.url}/api/dashboard/stores`, { headers: { cookie: seller.cookie } })).status).toBe(
      200,
    );
    const forged = await fetch(`${server.url}/api/auth/logout`, { method: 'POST', headers: { cookie: seller.cookie } });
    expect(forged.status).toBe(403);
    expect((await forged.json()).code).toBe('csrf_failed');
    expect(
      (
        await fetch(`${server.url}/api/auth/logout`, {
          method: 'POST',
          headers: { cookie: seller.cookie, 'x-csrf-token': seller.csrfToken },
        })
      ).status,
    ).toBe(204);
  });

  it('never treats a Bearer request as a cookie session', async () => {
    const seller = await registerSeller(server.url);
    const store = await createStoreFor(seller);
    const { key } = await createKeyFor(seller, { scopes: ['order:read'], storeIds: [store.id] });
    const response = await fetch(`${server.url}/api/dashboard/stores`, {
      headers: { cookie: seller.cookie, authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(401);
    // ...while the merchant route takes the key with no CSRF token at all.
    const merchant = await fetch(`${server.url}/api/merchant/v1/stores/${store.id}/orders`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(merchant.status).toBe(200);
  });
});

describe('password reset', () => {
  it('mails a one-time link that sets a new password and signs every session out', async () => {
    const seller = await registerSeller(server.url);
    expect((await post('/api/auth/forgot', { email: seller.email })).status).toBe(204);
    const mail = await smtp.waitFor((m) => m.to.includes(seller.email));
    const token = /token=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1];
    expect(token).toBeDefined();

    expect((await post('/api/auth/reset', { token, password: 'a brand new password' })).status).toBe(204);
    expect((await fetch(`${server.url}/api/auth/session`, { headers: { cookie: seller.cookie } })).status).toBe(401);
    expect((await post('/api/auth/login', { email: seller.email, password: seller.password })).status).toBe(401);
    expect((await post('/api/auth/login', { email: seller.email, password: 'a brand new password' })).status).toBe(200);

    const reused = await post('/api/auth/reset', { token, password: 'yet another password' });
    expect(reused.status).toBe(400);
    expect((await reused.json()).code).toBe('token_invalid');
  });

  it('mails one account at most 3 reset links an hour, whatever addresses ask; every request answers 204', async () => {
    const seller = await registerSeller(server.url);
    const statuses: number[] = [];
    // From addresses of their own: the route's 3 an hour per address never comes into it.
    for (let i = 0; i < 5; i++) statuses.push((await post('/api/auth/forgot', { email: seller.email })).status);
    expect(statuses).toEqual([204, 204, 204, 204, 204]);
    const deadline = Date.now() + 10_000;
    const resets = () => smtp.mails.filter((m) => m.to.includes(seller.email));
    while (resets().length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(resets()).toHaveLength(3);
  });

  it('answers an unknown e-mail the same and mails nothing', async () => {
    const email = uniqueEmail('ghost');
    expect((await post('/api/auth/forgot', { email })).status).toBe(204);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(smtp.mails.some((m) => m.to.includes(email))).toBe(false);
  });
});

describe('stores and staff', () => {
  it('refuses reserved, malformed and taken subdomains', async () => {
    const seller = await registerSeller(server.url);
    const create = (subdomain: string) => dashboard(seller, 'POST', '/api/dashboard/stores', { name: 'S', subdomain });
    expect((await create('admin')).status).toBe(400);
    expect((await create('ab')).status).toBe(400);
    expect((await create('Bad_Name')).status).toBe(400);
    expect((await create('-leading')).status).toBe(400);
    const store = await createStoreFor(seller);
    const taken = await create(store.subdomain);
    expect(taken.status).toBe(409);
  });

  it('lets staff do only what their permissions say, and only the owner manage members', async () => {
    const owner = await registerSeller(server.url);
    const store = await createStoreFor(owner);
    const staff = await registerSeller(server.url);
    await addStaff(owner, store.id, staff, ['viewOrders']);

    expect((await dashboard(staff, 'GET', `/api/dashboard/stores/${store.id}/orders`)).status).toBe(200);
    const rename = await dashboard(staff, 'PATCH', `/api/dashboard/stores/${store.id}`, { name: 'Mine now' });
    expect(rename.status).toBe(403);
    expect((await rename.json()).code).toBe('permission_missing');
    const members = await dashboard(staff, 'POST', `/api/dashboard/stores/${store.id}/members`, {
      email: uniqueEmail(),
      permissions: ['manageSettings'],
    });
    expect(members.status).toBe(403);

    const stranger = await registerSeller(server.url);
    const foreign = await dashboard(stranger, 'GET', `/api/dashboard/stores/${store.id}`);
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).code).toBe('store_forbidden');

    const listed = await (await dashboard(staff, 'GET', '/api/dashboard/stores')).json();
    expect(listed.stores).toEqual([
      expect.objectContaining({ id: store.id, role: 'staff', permissions: ['viewOrders'] }),
    ]);
  });
});

describe('secrets at rest', () => {
  it('a dump of the database holds no API key and no password in clear', async () => {
    const seller = await registerSeller(server.url);
    const store = await createStoreFor(seller);
    const { key } = await createKeyFor(seller, { scopes: ['order:read'], storeIds: [store.id] });
    const dump = execFileSync('pg_dump', ['--data-only', server.db.url], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(dump).toContain(seller.email); // the dump is real...
    expect(dump).toContain(key.slice(0, 14)); // ...and holds the key's prefix,
    expect(dump).not.toContain(key); // but never the key,
    expect(dump).not.toContain(key.slice(10)); // nor its secret part,
    expect(dump).not.toContain(seller.password); // nor the password.
    expect(dump).not.toContain(seller.cookie.split('=')[1]!); // nor a session token.
  });
});
