/**
 * Black-box: the seller's own account over HTTP. The password changed with the current one (the
 * other sessions end, this one stays), the sessions listed and signed out, and two-factor sign-in. Enrolment (CSRF-guarded, a QR image and the
 * secret, confirmed by a first code), sign-in asking `two_factor_required` after the right
 * password, a code accepted once, a recovery code used once, new recovery codes in place of the
 * old, and turning it off with the password. The display name. The owner's rule that staff use
 * two-factor sign-in: owner only, only with the owner's own on; a member without it is answered
 * `two_factor_enrolment_required` on the store's dashboard routes (not on its account routes, not
 * on an API key's) until they enrol.
 */
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addStaff,
  clientIp,
  createKeyFor,
  createStoreFor,
  dashboard,
  merchantGet,
  registerSeller,
  type Seller,
} from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const totp = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 });

function login(seller: Seller, extra: Record<string, string> = {}) {
  return fetch(`${server.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ email: seller.email, password: seller.password, ...extra }),
  });
}

describe('two-factor sign-in', () => {
  it('enrols with a first code, then asks for the code after the password; a code and a recovery code work once', async () => {
    const seller = await registerSeller(server.url);

    // CSRF-guarded like every unsafe session call.
    const noCsrf = await fetch(`${server.url}/api/dashboard/account/two-factor/setup`, {
      method: 'POST',
      headers: { cookie: seller.cookie, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(noCsrf.status).toBe(403);

    const setup = await dashboard(seller, 'POST', '/api/dashboard/account/two-factor/setup', {});
    expect(setup.status).toBe(200);
    const { secret, otpauthUri, qrCode } = await setup.json();
    expect(otpauthUri).toContain(`secret=${secret}`);
    expect(qrCode).toMatch(/^data:image\/svg\+xml;base64,/);

    const wrong = await dashboard(seller, 'POST', '/api/dashboard/account/two-factor/confirm', { code: 'abcdef' });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ code: 'validation_failed' });

    const confirmed = await dashboard(seller, 'POST', '/api/dashboard/account/two-factor/confirm', {
      code: totp(secret).generate(),
    });
    expect(confirmed.status).toBe(200);
    const { recoveryCodes } = await confirmed.json();
    expect(recoveryCodes).toHaveLength(10);
    const account = await (await dashboard(seller, 'GET', '/api/dashboard/account')).json();
    expect(account).toMatchObject({
      user: { email: seller.email },
      twoFactor: { enabled: true, recoveryCodesLeft: 10 },
    });

    const asked = await login(seller);
    expect(asked.status).toBe(401);
    expect(await asked.json()).toMatchObject({ code: 'two_factor_required' });
    expect(asked.headers.getSetCookie().some((c) => c.startsWith('svc_session='))).toBe(false);

    const badShape = await login(seller, { twoFactorCode: '12' });
    expect(badShape.status).toBe(400);

    // The enrolment spent this step's code: the next step's is taken (one step of drift either way).
    const code = totp(secret).generate({ timestamp: Date.now() + 30_000 });
    const signedIn = await login(seller, { twoFactorCode: code });
    expect(signedIn.status).toBe(200);
    expect(signedIn.headers.getSetCookie().some((c) => c.startsWith('svc_session='))).toBe(true);
    // The same code again, in its window: refused.
    const replay = await login(seller, { twoFactorCode: code });
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({ code: 'unauthorized' });

    const recovery = recoveryCodes[0] as string;
    expect((await login(seller, { twoFactorCode: recovery })).status).toBe(200);
    const usedAgain = await login(seller, { twoFactorCode: recovery });
    expect(usedAgain.status).toBe(401);

    // Off: the password is needed; then the password alone signs in.
    const wrongPassword = await dashboard(seller, 'POST', '/api/dashboard/account/two-factor/disable', {
      password: 'not it',
    });
    // 400: the session is fine (a 401 would send the dashboard to sign-in).
    expect(wrongPassword.status).toBe(400);
    expect((await dashboard(seller, 'POST', '/api/dashboard/account/two-factor/disable', {})).status).toBe(400);
    const off = await dashboard(seller, 'POST', '/api/dashboard/account/two-factor/disable', {
      password: seller.password,
    });
    expect(off.status).toBe(204);
    expect((await login(seller)).status).toBe(200);
  }, 60_000);
});

describe('password and sessions', () => {
  it('changes the password with the current one, ending the other sessions; lists sessions and signs the others out', async () => {
    const seller = await registerSeller(server.url);
    const other = await login(seller);
    expect(other.status).toBe(200);
    const otherCookie = other.headers
      .getSetCookie()
      .find((c) => c.startsWith('svc_session='))!
      .split(';')[0]!;

    const listed = await (await dashboard(seller, 'GET', '/api/dashboard/account/sessions')).json();
    expect(listed.sessions).toHaveLength(2);
    expect(listed.sessions.filter((row: { current: boolean }) => row.current)).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toMatch(/203\.0\.|127\.0\.0\.1/);

    const wrong = await dashboard(seller, 'POST', '/api/dashboard/account/password', {
      currentPassword: 'not it',
      newPassword: 'a brand new password',
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ code: 'validation_failed', issues: [{ path: 'currentPassword' }] });
    const short = await dashboard(seller, 'POST', '/api/dashboard/account/password', {
      currentPassword: seller.password,
      newPassword: 'short',
    });
    expect(short.status).toBe(400);

    const changed = await dashboard(seller, 'POST', '/api/dashboard/account/password', {
      currentPassword: seller.password,
      newPassword: 'a brand new password',
    });
    expect(changed.status).toBe(204);
    expect((await dashboard(seller, 'GET', '/api/auth/session')).status).toBe(200);
    const gone = await fetch(`${server.url}/api/auth/session`, { headers: { cookie: otherCookie } });
    expect(gone.status).toBe(401);
    expect((await login(seller)).status).toBe(401);
    const fresh = await login({ ...seller, password: 'a brand new password' });
    expect(fresh.status).toBe(200);

    const out = await dashboard(seller, 'POST', '/api/dashboard/account/sessions/sign-out-others', {});
    expect(out.status).toBe(200);
    expect(await out.json()).toEqual({ signedOut: 1 });
    expect((await (await dashboard(seller, 'GET', '/api/dashboard/account/sessions')).json()).sessions).toHaveLength(1);
  });
});

describe('e-mail change', () => {
  it('asks for the password, answers 204, and confirms only with a valid link', async () => {
    const seller = await registerSeller(server.url);
    const newEmail = `moved-${Date.now().toString(36)}@example.test`;
    const wrong = await dashboard(seller, 'POST', '/api/dashboard/account/email', { newEmail, password: 'not it' });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ code: 'validation_failed', issues: [{ path: 'password' }] });
    expect(
      (await dashboard(seller, 'POST', '/api/dashboard/account/email', { newEmail: 'nope', password: seller.password }))
        .status,
    ).toBe(400);
    expect(
      (await dashboard(seller, 'POST', '/api/dashboard/account/email', { newEmail, password: seller.password })).status,
    ).toBe(204);
    // Unchanged until the link is opened.
    expect((await (await dashboard(seller, 'GET', '/api/dashboard/account')).json()).user.email).toBe(seller.email);
    const bogus = await fetch(`${server.url}/api/auth/email/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
      body: JSON.stringify({ token: 'x'.repeat(40) }),
    });
    expect(bogus.status).toBe(400);
    expect(await bogus.json()).toMatchObject({ code: 'token_invalid' });
  });
});

/** Turns two-factor sign-in on for the seller over HTTP; answers the secret and the recovery codes. */
async function enrol(seller: Seller): Promise<{ secret: string; recoveryCodes: string[] }> {
  const setup = await dashboard(seller, 'POST', '/api/dashboard/account/two-factor/setup', {});
  const { secret } = await setup.json();
  const confirmed = await dashboard(seller, 'POST', '/api/dashboard/account/two-factor/confirm', {
    code: totp(secret).generate(),
  });
  expect(confirmed.status).toBe(200);
  return { secret, recoveryCodes: (await confirmed.json()).recoveryCodes };
}

describe('new recovery codes', () => {
  it('takes the password; answers ten new codes; the old ones stop working', async () => {
    const seller = await registerSeller(server.url);
    const { recoveryCodes: old } = await enrol(seller);
    const path = '/api/dashboard/account/two-factor/recovery-codes';
    const wrong = await dashboard(seller, 'POST', path, { password: 'not the password' });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ code: 'validation_failed', issues: [{ path: 'password' }] });
    expect((await dashboard(seller, 'POST', path, {})).status).toBe(400);

    const made = await dashboard(seller, 'POST', path, { password: seller.password });
    expect(made.status).toBe(200);
    const { recoveryCodes } = await made.json();
    expect(recoveryCodes).toHaveLength(10);
    expect(recoveryCodes.filter((code: string) => old.includes(code))).toEqual([]);
    expect((await login(seller, { twoFactorCode: old[0]! })).status).toBe(401);
    expect((await login(seller, { twoFactorCode: recoveryCodes[0] })).status).toBe(200);
  });
});

describe('display name', () => {
  it('is set trimmed, shown by the session and in the staff list, refused empty or too long, and cleared with null', async () => {
    const owner = await registerSeller(server.url);
    const staff = await registerSeller(server.url);
    const store = await createStoreFor(owner, 'Named');
    await addStaff(owner, store.id, staff, ['viewOrders']);

    const set = await dashboard(staff, 'PATCH', '/api/dashboard/account', { name: '  Grace Hopper  ' });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ email: staff.email, name: 'Grace Hopper' });
    const session = await (await dashboard(staff, 'GET', '/api/auth/session')).json();
    expect(session.user).toMatchObject({ name: 'Grace Hopper' });
    const members = await (await dashboard(owner, 'GET', `/api/dashboard/stores/${store.id}/members`)).json();
    expect(members.members.map((m: { email: string; name: string | null }) => [m.email, m.name])).toEqual([
      [owner.email, null],
      [staff.email, 'Grace Hopper'],
    ]);

    for (const name of ['', '   ', 'x'.repeat(101), 42]) {
      const bad = await dashboard(staff, 'PATCH', '/api/dashboard/account', { name });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ code: 'validation_failed' });
    }
    const cleared = await dashboard(staff, 'PATCH', '/api/dashboard/account', { name: null });
    expect(await cleared.json()).toMatchObject({ name: null });
  });
});

describe("the owner's two-factor rule for staff", () => {
  it('only the owner sets it, with their own two-factor on; members without it get 403 on store routes until they enrol', async () => {
    const owner = await registerSeller(server.url);
    const staff = await registerSeller(server.url);
    const store = await createStoreFor(owner, 'Guarded Goods');
    await addStaff(owner, store.id, staff, ['viewOrders', 'manageSettings']);
    const rule = `/api/dashboard/stores/${store.id}/require-two-factor`;

    // Staff, even with manageSettings, cannot set it; the owner cannot turn it on without their own.
    const byStaff = await dashboard(staff, 'PUT', rule, { requireTwoFactor: false });
    expect(byStaff.status).toBe(403);
    expect(await byStaff.json()).toMatchObject({ code: 'permission_missing' });
    // Nor through the store's own update (the field is not one of its inputs).
    const sneaky = await dashboard(staff, 'PATCH', `/api/dashboard/stores/${store.id}`, { requireTwoFactor: true });
    expect(sneaky.status).toBe(400);
    const early = await dashboard(owner, 'PUT', rule, { requireTwoFactor: true });
    expect(early.status).toBe(403);
    expect(await early.json()).toMatchObject({ code: 'two_factor_enrolment_required' });
    expect((await (await dashboard(owner, 'GET', `/api/dashboard/stores/${store.id}`)).json()).requireTwoFactor).toBe(
      false,
    );

    await enrol(owner);
    const key = await createKeyFor(owner, { scopes: ['order:read', 'store:read'], storeIds: [store.id] });
    const on = await dashboard(owner, 'PUT', rule, { requireTwoFactor: true });
    expect(on.status).toBe(200);
    expect(await on.json()).toMatchObject({ id: store.id, requireTwoFactor: true });

    // The staff member without two-factor sign-in: 403 with the code on the store's routes ...
    for (const path of [`/api/dashboard/stores/${store.id}`, `/api/dashboard/stores/${store.id}/orders`]) {
      const refused = await dashboard(staff, 'GET', path);
      expect(refused.status, path).toBe(403);
      expect(await refused.json()).toMatchObject({ code: 'two_factor_enrolment_required' });
    }
    // ... and cannot make a key to go round it ...
    const keyed = await dashboard(staff, 'POST', '/api/dashboard/api-keys', {
      name: 'around',
      scopes: ['order:read'],
      storeIds: [store.id],
    });
    expect(keyed.status).toBe(403);
    expect(await keyed.json()).toMatchObject({ code: 'two_factor_enrolment_required' });
    // ... while the account routes and the store list stay open, so they can enrol and see why.
    expect((await dashboard(staff, 'GET', '/api/dashboard/account')).status).toBe(200);
    const list = await (await dashboard(staff, 'GET', '/api/dashboard/stores')).json();
    expect(list.stores).toEqual([
      expect.objectContaining({ id: store.id, name: 'Guarded Goods', requireTwoFactor: true }),
    ]);

    await enrol(staff);
    expect((await dashboard(staff, 'GET', `/api/dashboard/stores/${store.id}`)).status).toBe(200);
    expect((await dashboard(staff, 'GET', `/api/dashboard/stores/${store.id}/orders`)).status).toBe(200);

    // The owner who turns their own off is held to the rule too; their API key is not (keys are not people).
    expect(
      (await dashboard(owner, 'POST', '/api/dashboard/account/two-factor/disable', { password: owner.password }))
        .status,
    ).toBe(204);
    const ownerRefused = await dashboard(owner, 'GET', `/api/dashboard/stores/${store.id}`);
    expect(ownerRefused.status).toBe(403);
    expect(await ownerRefused.json()).toMatchObject({ code: 'two_factor_enrolment_required' });
    expect((await merchantGet(server.url, key.key, `/stores/${store.id}/orders`)).status).toBe(200);
    expect((await merchantGet(server.url, key.key, `/stores/${store.id}`)).status).toBe(200);
  });
});
