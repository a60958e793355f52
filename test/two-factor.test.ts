/**
 * Black-box: a seller's two-factor sign-in over HTTP. Enrolment (CSRF-guarded, a QR image and the
 * secret, confirmed by a first code), sign-in asking `two_factor_required` after the right
 * password, a code accepted once, a recovery code used once, and turning it off with the password.
 */
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientIp, dashboard, registerSeller, type Seller } from './support/seller.js';
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

/** Waits for the next 30-second step, so a fresh code is not the one just spent. */
async function nextStep(): Promise<void> {
  const left = 30_000 - (Date.now() % 30_000);
  await new Promise((resolve) => setTimeout(resolve, left + 50));
}

describe('two-factor sign-in', () => {
  it('enrols with a first code, then asks for the code after the password; a code and a recovery code work once', async () => {
    const seller = await registerSeller(server.url);

    // CSRF-guarded like every unsafe session call.
    const noCsrf = await fetch(`${server.url}/api/auth/two-factor/setup`, {
      method: 'POST',
      headers: { cookie: seller.cookie, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(noCsrf.status).toBe(403);

    const setup = await dashboard(seller, 'POST', '/api/auth/two-factor/setup', {});
    expect(setup.status).toBe(200);
    const { secret, otpauthUri, qrCode } = await setup.json();
    expect(otpauthUri).toContain(`secret=${secret}`);
    expect(qrCode).toMatch(/^data:image\/svg\+xml;base64,/);

    const wrong = await dashboard(seller, 'POST', '/api/auth/two-factor/confirm', { code: 'abcdef' });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ code: 'validation_failed' });

    const confirmed = await dashboard(seller, 'POST', '/api/auth/two-factor/confirm', {
      code: totp(secret).generate(),
    });
    expect(confirmed.status).toBe(200);
    const { recoveryCodes } = await confirmed.json();
    expect(recoveryCodes).toHaveLength(10);
    const account = await (await dashboard(seller, 'GET', '/api/auth/account')).json();
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

    await nextStep();
    const code = totp(secret).generate();
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
    const wrongPassword = await dashboard(seller, 'POST', '/api/auth/two-factor/disable', { password: 'not it' });
    expect(wrongPassword.status).toBe(401);
    expect((await dashboard(seller, 'POST', '/api/auth/two-factor/disable', {})).status).toBe(400);
    const off = await dashboard(seller, 'POST', '/api/auth/two-factor/disable', { password: seller.password });
    expect(off.status).toBe(204);
    expect((await login(seller)).status).toBe(200);
  }, 60_000);
});
