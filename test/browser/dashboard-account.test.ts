/**
 * In a real browser: the seller's Account page. Its sessions, `Sign out everywhere` and a password
 * change that keeps this session and ends the others; and two-factor sign-in. The seller opens `Account`
 * from the shell, sets up two-factor sign-in (a QR image and the key as text, turned on with a
 * first code, ten recovery codes shown once), then signs in with the app's code, and with a
 * recovery code, which fails the second time; makes new recovery codes; gives their name. The owner
 * ticks `Require two-factor sign-in for staff` in Settings; a staff member signing in is sent to
 * Account with the store's name and why, enrols, and then reaches the store.
 *
 * With SVC_SCREENSHOTS set, the page is saved to docs/screenshots/ (dashboard-account-*.png,
 * dashboard-settings-two-factor-*.png) at 1280 and 390 px, light and dark.
 */
import path from 'node:path';
import { Secret, TOTP } from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/server.js';
import { addStaff, dashboard, registerSeller } from '../support/seller.js';
import { dashboardPagePerTest, expectAccessible, signInThroughUi, storeUrl } from './dashboard-support.js';
import { createShop, launchChromium, startPageServer, unlabelledControls } from './support.js';

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});
// Each test's requests from an address of its own: the sign-ins here spend no other test's budget.
dashboardPagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ page } = opened),
);

const totp = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 });

async function shots(name: string, focus?: import('playwright-core').Locator): Promise<void> {
  if (!process.env.SVC_SCREENSHOTS) return;
  for (const colorScheme of ['light', 'dark'] as const)
    for (const width of [1280, 390]) {
      await page.emulateMedia({ colorScheme });
      await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
      await focus?.evaluate((element: any) => element.scrollIntoView({ block: 'start' }));
      const suffix = colorScheme === 'dark' ? '-dark' : '';
      await page.screenshot({ path: path.join(REPO_ROOT, 'docs/screenshots', `${name}-${width}${suffix}.png`) });
    }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** The confirmation link mailed to `email` (the development mailbox). */
async function confirmLinkFor(email: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { emails } = await (await fetch(`${server.url}/dev/mailbox.json`)).json();
    const mail = emails.find(
      (m: { to: string; text: string }) => m.to === email && /confirm-email\?token=/.test(m.text),
    );
    const link = mail && /https?:\/\/\S+\/dashboard\/confirm-email\?token=[^\s)>"]+/.exec(mail.text)?.[0];
    if (link) return link as string;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no confirmation link e-mailed to ${email}`);
}

/** Signs out by forgetting the cookie, and opens the sign-in page with the email and password typed in. */
async function passwordStep(email: string, password: string): Promise<void> {
  await page.context().clearCookies();
  await page.goto(`${server.url}/dashboard/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Authentication code').waitFor();
}

describe('account and two-factor sign-in', () => {
  it('sets up two-factor sign-in, then signs in with the app’s code and with a recovery code (once)', async () => {
    const shop = await createShop(server.url, 'Pixel Forge');
    const { email, password } = shop.seller;
    await page.goto(`${server.url}/dashboard/sign-in?redirect=${encodeURIComponent(`/stores/${shop.store.id}`)}`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/dashboard/stores/${shop.store.id}`);

    // The shell's `Account` link, beside Sign out.
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    await page.getByRole('heading', { name: 'Account', level: 1, exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/account');
    const twoFactor = page.getByRole('region', { name: 'Two-factor sign-in' });
    await twoFactor.getByText('Off: your password alone signs you in.').waitFor();
    await expectAccessible(page, 'account');
    await shots('dashboard-account-after');

    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    const qr = page.getByRole('img', { name: 'QR code for your authenticator app' });
    await qr.waitFor();
    expect(await qr.evaluate((img: any) => img.naturalWidth > 0)).toBe(true);
    const secret = (await page.getByLabel('Setup key').textContent())!.trim();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(await unlabelledControls(page)).toEqual([]);
    await expectAccessible(page, 'account, setting up');
    await shots('dashboard-account-setup-after', twoFactor);

    // A wrong code is named at the field; the right one turns it on.
    await page.getByLabel('Code from the app').fill('12');
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByText('the 6-digit code from the authenticator app').waitFor();
    expect(await page.getByLabel('Code from the app').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Code from the app').fill(totp(secret).generate());
    await page.getByRole('button', { name: 'Turn on' }).click();
    const list = page.getByRole('list', { name: 'Recovery codes' });
    await list.waitFor();
    const codes = (await list.getByRole('listitem').allTextContents()).map((code) => code.trim());
    expect(codes).toHaveLength(10);
    await page.getByRole('button', { name: 'I have saved my recovery codes' }).click();
    await twoFactor.getByText(/^On: signing in asks for a code/).waitFor();
    await twoFactor.getByText('10 recovery codes left.', { exact: false }).waitFor();

    // Sign in with the app's code of the next step (the confirming code spent this one; one step of drift either way).
    await passwordStep(email, password);
    await page.getByLabel('Authentication code').fill(totp(secret).generate({ timestamp: Date.now() + 30_000 }));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/dashboard/sign-in'));

    // With a recovery code; the same code fails the second time.
    await passwordStep(email, password);
    await page.getByLabel('Authentication code').fill(codes[0]!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/dashboard/sign-in'));

    await passwordStep(email, password);
    await page.getByLabel('Authentication code').fill(codes[0]!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('That code is wrong or was already used.').waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');

    await page.goto(`${server.url}/dashboard/sign-in`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Authentication code').fill(codes[1]!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/dashboard/sign-in'));
    await page.goto(`${server.url}/dashboard/account`);
    await twoFactor.getByText('8 recovery codes left.', { exact: false }).waitFor();
  }, 120_000);

  it('lists the sessions, signs the others out, and changes the password keeping this session', async () => {
    const shop = await createShop(server.url, 'Pixel Forge');
    const { email, password } = shop.seller;
    await page.goto(`${server.url}/dashboard/sign-in?redirect=${encodeURIComponent('/account')}`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/dashboard/account`);

    const sessions = page.getByRole('table', { name: 'Sessions' });
    await expect.poll(() => sessions.getByRole('row').count()).toBe(3);
    await sessions.getByRole('cell', { name: 'This session' }).waitFor();
    await expectAccessible(page, 'account with sessions');
    await shots('dashboard-account-sessions-after', page.getByRole('region', { name: 'Sessions' }));
    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await expect.poll(() => sessions.getByRole('row').count()).toBe(2);
    // The session registration made (over HTTP) is gone; this one stays.
    expect((await fetch(`${server.url}/api/auth/session`, { headers: { cookie: shop.seller.cookie } })).status).toBe(
      401,
    );

    await page.getByLabel('Current password').fill('not the password');
    await page.getByLabel('New password', { exact: true }).fill('a brand new password');
    await page.getByLabel('Repeat the new password').fill('a brand new password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Your current password is not right.').first().waitFor();
    expect(await page.getByLabel('Current password').getAttribute('aria-invalid')).toBe('true');
    expect(new URL(page.url()).pathname).toBe('/dashboard/account');

    await page.getByLabel('Current password').fill(password);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Account', level: 1, exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/account');
  }, 120_000);

  it('changes the e-mail address through the link mailed to the new one', async () => {
    const shop = await createShop(server.url, 'Pixel Forge');
    const { email, password } = shop.seller;
    const newEmail = `moved-${Date.now().toString(36)}@example.test`;
    await page.goto(`${server.url}/dashboard/sign-in?redirect=${encodeURIComponent('/account')}`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Account', level: 1, exact: true }).waitFor();

    // Submitted empty: each missing field is named at the field.
    await page.getByRole('button', { name: 'Change e-mail address' }).click();
    await expect.poll(() => page.getByLabel('New e-mail address').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Your password').getAttribute('aria-invalid')).toBe('true');

    await page.getByLabel('New e-mail address').fill(newEmail);
    await page.getByLabel('Your password').fill(password);
    await page.getByRole('button', { name: 'Change e-mail address' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `We sent a link to ${newEmail}.` })
      .waitFor();

    const link = new URL(await confirmLinkFor(newEmail));
    await page.goto(`${server.url}${link.pathname}${link.search}`);
    await page.getByRole('button', { name: 'Confirm e-mail address' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Your e-mail address is now ${newEmail}.` })
      .waitFor();
    await page.goto(`${server.url}/dashboard/account`);
    await page.getByText(newEmail, { exact: true }).waitFor();
  }, 60_000);

  it('gives a name and makes new recovery codes that replace the old', async () => {
    const shop = await createShop(server.url, 'Pixel Forge');
    const { email, password } = shop.seller;
    await page.goto(`${server.url}/dashboard/sign-in?redirect=${encodeURIComponent('/account')}`);
    await signInThroughUi(page, { email, password });
    await page.getByRole('heading', { name: 'Account', level: 1, exact: true }).waitFor();

    await page.getByLabel('Name', { exact: true }).fill('x'.repeat(101));
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Name', { exact: true }).fill('  Ada Lovelace ');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.reload();
    await expect.poll(() => page.getByLabel('Name', { exact: true }).inputValue()).toBe('Ada Lovelace');

    // Two-factor on (over HTTP, as the first test does it through the page), then new codes here.
    const setup = await (await dashboard(shop.seller, 'POST', '/api/dashboard/account/two-factor/setup', {})).json();
    const confirmed = await dashboard(shop.seller, 'POST', '/api/dashboard/account/two-factor/confirm', {
      code: totp(setup.secret).generate(),
    });
    const old: string[] = (await confirmed.json()).recoveryCodes;
    await page.reload();
    const twoFactor = page.getByRole('region', { name: 'Two-factor sign-in' });
    await twoFactor.getByText('10 recovery codes left.', { exact: false }).waitFor();
    await shots('dashboard-account-two-factor-on', twoFactor);
    await page.getByRole('button', { name: 'Regenerate recovery codes' }).click();
    const dialog = page.getByRole('dialog', { name: 'New recovery codes' });
    await dialog.getByLabel('Password').fill('not the password');
    await dialog.getByRole('button', { name: 'Make new codes' }).click();
    await dialog.getByText('That password is not right.').first().waitFor();
    await expectAccessible(page, 'account, new recovery codes');
    await dialog.getByLabel('Password').fill(password);
    await dialog.getByRole('button', { name: 'Make new codes' }).click();
    const list = page.getByRole('list', { name: 'Recovery codes' });
    await list.waitFor();
    await page.getByText('Your old recovery codes no longer work.', { exact: false }).waitFor();
    const codes = (await list.getByRole('listitem').allTextContents()).map((code) => code.trim());
    expect(codes).toHaveLength(10);
    expect(codes.filter((code) => old.includes(code))).toEqual([]);
    await page.getByRole('button', { name: 'I have saved my recovery codes' }).click();
    await twoFactor.getByText('10 recovery codes left.', { exact: false }).waitFor();

    // The old code no longer signs in; a new one does.
    await passwordStep(email, password);
    await page.getByLabel('Authentication code').fill(old[0]!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('That code is wrong or was already used.').waitFor();
    await page.getByLabel('Authentication code').fill(codes[0]!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/dashboard/sign-in'));
  }, 120_000);

  it('the owner requires two-factor sign-in; a staff member is sent to Account, told why, enrols and reaches the store', async () => {
    const shop = await createShop(server.url, 'Guarded Goods');
    const owner = shop.seller;
    const staff = await registerSeller(server.url);
    await addStaff(owner, shop.store.id, staff, ['viewOrders']);
    const ownerSetup = await (await dashboard(owner, 'POST', '/api/dashboard/account/two-factor/setup', {})).json();
    expect(
      (
        await dashboard(owner, 'POST', '/api/dashboard/account/two-factor/confirm', {
          code: totp(ownerSetup.secret).generate(),
        })
      ).status,
    ).toBe(200);

    // The owner ticks the box in Settings (signed in with the next step's code).
    await page.goto(storeUrl(server.url, shop.store.id, '/settings'));
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByLabel('Authentication code')
      .fill(totp(ownerSetup.secret).generate({ timestamp: Date.now() + 30_000 }));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(storeUrl(server.url, shop.store.id, '/settings'));
    const rule = page.getByRole('checkbox', { name: 'Require two-factor sign-in for staff' });
    await rule.waitFor();
    expect(await rule.isChecked()).toBe(false);
    await rule.check();
    await page.getByRole('button', { name: 'Apply two-factor rule' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Saved\.$/ })
      .waitFor();
    await expectAccessible(page, 'settings with the two-factor rule');
    await shots('dashboard-settings-two-factor', page.getByRole('region', { name: 'Security' }));
    const store = await (await dashboard(owner, 'GET', `/api/dashboard/stores/${shop.store.id}`)).json();
    expect(store.requireTwoFactor).toBe(true);

    // The staff member signs in to the store and lands on Account, told which store and why.
    await page.context().clearCookies();
    await page.goto(storeUrl(server.url, shop.store.id));
    await signInThroughUi(page, { email: staff.email, password: staff.password });
    await page.waitForURL(`${server.url}/dashboard/account`);
    const notice = page.getByRole('alert').filter({ hasText: 'Two-factor sign-in needed.' });
    await notice
      .getByText('Guarded Goods requires two-factor sign-in for everyone who works in it.', { exact: false })
      .waitFor();
    await expectAccessible(page, 'account, two-factor required by a store');
    await shots('dashboard-account-two-factor-required', notice);

    // Enrols here, then reaches the store.
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    const secret = (await page.getByLabel('Setup key').textContent())!.trim();
    await page.getByLabel('Code from the app').fill(totp(secret).generate());
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByRole('button', { name: 'I have saved my recovery codes' }).click();
    await expect.poll(() => notice.count()).toBe(0);
    await page.getByRole('link', { name: 'Back to your stores' }).click();
    await page.waitForURL(storeUrl(server.url, shop.store.id));
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    await page.getByText('How Guarded Goods is selling.').waitFor();
    await page.goto(storeUrl(server.url, shop.store.id, '/orders'));
    await page.getByRole('heading', { name: 'Orders', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/dashboard/stores/${shop.store.id}/orders`);
  }, 120_000);
});
