/**
 * In a real browser: the dashboard's shell. A signed-out deep link comes back after sign-in;
 * registering and creating a store lead to the store's frame (the `Main` navigation docs/architecture.md names
 * under The faces, the `Store` switcher, `Sign out`); a session ended elsewhere goes to sign-in and back to
 * where the seller was; a password reset by the e-mailed link; a sign-in past the account's
 * attempts with the e-mailed code; sign-in and the navigation from the keyboard alone; and
 * axe-core, light and dark, on every screen the shell reaches.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientIp, uniqueEmail } from '../support/seller.js';
import { launchChromium } from './support.js';
import {
  dashboardPagePerTest,
  expectAccessible,
  MAIN_NAV,
  sellerWithStore,
  signInThroughUi,
  startPageServer,
  storeUrl,
} from './dashboard-support.js';

// Evaluated in the page; tsconfig.test.json has no DOM types.
declare const document: any;

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});
dashboardPagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ page } = opened),
);

/** The link in the newest password-reset e-mail to `email` in the development mailbox. */
async function resetLinkFor(email: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { emails } = await (await fetch(`${server.url}/dev/mailbox.json`)).json();
    const mail = emails.find(
      (m: { to: string; text: string }) => m.to === email && /reset-password\?token=/.test(m.text),
    );
    const link = mail && /https?:\/\/\S+\/dashboard\/reset-password\?token=[^\s)>"]+/.exec(mail.text)?.[0];
    if (link) return link as string;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no reset link e-mailed to ${email}`);
}

/** The code in the newest sign-in code e-mail to `email` in the development mailbox. */
async function signInCodeFor(email: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { emails } = await (await fetch(`${server.url}/dev/mailbox.json`)).json();
    const mail = emails.find(
      (m: { to: string; subject: string }) => m.to === email && m.subject === 'Your svc sign-in code',
    );
    const code = mail && /enter this code with your password: (\d{6})/.exec(mail.text)?.[1];
    if (code) return code as string;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no sign-in code e-mailed to ${email}`);
}

/** The browser's session cookie, as a Cookie header. */
async function browserSession(): Promise<string> {
  const cookie = (await page.context().cookies(server.url)).find((c) => c.name === 'svc_session');
  expect(cookie, 'the browser holds a svc_session cookie').toBeDefined();
  return `svc_session=${cookie!.value}`;
}

/** Ends the browser's session on the server (as signing out in another tab would). */
async function endSessionElsewhere(): Promise<void> {
  const cookie = await browserSession();
  const session = await fetch(`${server.url}/api/auth/session`, { headers: { cookie } });
  expect(session.status).toBe(200);
  const { csrfToken } = await session.json();
  const loggedOut = await fetch(`${server.url}/api/auth/logout`, {
    method: 'POST',
    headers: { cookie, 'x-csrf-token': csrfToken },
  });
  expect(loggedOut.status).toBe(204);
  expect((await fetch(`${server.url}/api/auth/session`, { headers: { cookie } })).status).toBe(401);
}

async function expectMainNavigation(): Promise<void> {
  const nav = page.getByRole('navigation', { name: 'Main' });
  await nav.waitFor();
  const names = await nav.getByRole('link').allTextContents();
  // Every link of the `Main` navigation is there (Blacklist is the screen issue 28 item 6 added beside them).
  expect(names.map((name) => name.trim())).toEqual(MAIN_NAV.map((link) => link.name));
  await page.getByRole('combobox', { name: 'Store' }).waitFor();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

describe('dashboard shell', () => {
  it('a signed-out deep link goes to sign-in, and signing in lands on exactly that URL', async () => {
    const { seller, store } = await sellerWithStore(server.url);
    const deepLink = storeUrl(server.url, store.id, '/orders?status=paid');
    await page.goto(deepLink);
    await page.getByRole('heading', { name: 'Sign in to svc' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    await signInThroughUi(page, seller);
    await page.waitForURL(deepLink);
    expect(page.url()).toBe(deepLink);
    await page.getByRole('heading', { name: 'Orders', level: 1 }).waitFor();
    // The filter is the URL's: the status control shows it.
    expect(await page.getByLabel('Status').inputValue()).toBe('paid');
  });

  it('registers through the UI, creates a store, shows the Main navigation and the Store switcher; Sign out returns to sign-in', async () => {
    const email = uniqueEmail('ui');
    await page.goto(`${server.url}/dashboard/`);
    await page.getByRole('heading', { name: 'Sign in to svc' }).waitFor();
    await page.getByRole('link', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Create your svc account' }).waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByRole('button', { name: 'Create account' }).click();

    await page.getByRole('heading', { name: 'Create a store' }).waitFor();
    await page.getByLabel('Store name').fill('Night Owl Games');
    await page.getByLabel('Subdomain').fill(`owl-${Date.now().toString(36)}`);
    await page.getByRole('button', { name: 'Create store' }).click();
    await page.waitForURL(/\/dashboard\/stores\/[^/]+$/);
    await expectMainNavigation();
    const storeId = new URL(page.url()).pathname.split('/')[3]!;
    // Each link goes to its screen under this store.
    for (const link of MAIN_NAV) {
      expect(
        await page
          .getByRole('navigation', { name: 'Main' })
          .getByRole('link', { name: link.name, exact: true })
          .getAttribute('href'),
      ).toBe(`/dashboard/stores/${storeId}${link.path}`);
    }
    const switcher = page.getByRole('combobox', { name: 'Store' });
    // The store list is refetched after the creation: until it arrives the select may still hold "__new".
    await expect.poll(() => switcher.inputValue(), { timeout: 10_000 }).toBe(storeId);
    expect(await switcher.locator('option:checked').textContent()).toBe('Night Owl Games');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to svc' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    // The session is over on the server too: the store's pages send the browser back to sign-in.
    await page.goto(storeUrl(server.url, storeId, '/products'));
    await page.getByRole('heading', { name: 'Sign in to svc' }).waitFor();
  });

  it('a session ended elsewhere, then a page load: sign-in, and signing in again returns to that page', async () => {
    const { seller, store } = await sellerWithStore(server.url);
    await page.goto(storeUrl(server.url, store.id, '/coupons'));
    await signInThroughUi(page, seller);
    await page.waitForURL(storeUrl(server.url, store.id, '/coupons'));
    await page.getByRole('heading', { name: 'Coupons', level: 1 }).waitFor();
    await endSessionElsewhere();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to svc' }).waitFor();
    await signInThroughUi(page, seller);
    await page.waitForURL(storeUrl(server.url, store.id, '/coupons'));
    await page.getByRole('heading', { name: 'Coupons', level: 1 }).waitFor();
  });

  // The open app learns of the ended session from its next API call's 401: the Orders screen's list.
  it('a session ended elsewhere while the app is open: the next click goes to sign-in, and signing in again returns to where the seller was', async () => {
    const { seller, store } = await sellerWithStore(server.url);
    await page.goto(storeUrl(server.url, store.id));
    await signInThroughUi(page, seller);
    await expectMainNavigation();
    // Home's own requests answer first (its setup steps and both figure cards): one still in flight when the
    // session ends would meet the 401 itself and reach sign-in before the click.
    await page.getByRole('heading', { name: 'Set up your store' }).waitFor();
    await page.getByRole('heading', { name: 'MRR per month' }).waitFor();
    await endSessionElsewhere();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Orders' }).click();
    await page.getByRole('heading', { name: 'Sign in to svc' }).waitFor();
    await signInThroughUi(page, seller);
    await page.waitForURL(storeUrl(server.url, store.id, '/orders'));
    await page.getByRole('heading', { name: 'Orders', level: 1 }).waitFor();
  });

  it('resets a password by the e-mailed link and signs in with the new one', async () => {
    const { seller } = await sellerWithStore(server.url);
    await page.goto(`${server.url}/dashboard/sign-in`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await page.getByLabel('Email').fill(seller.email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByRole('status').filter({ hasText: 'a link to choose a new password is on its way' }).waitFor();

    const link = await resetLinkFor(seller.email);
    expect(new URL(link).pathname).toBe('/dashboard/reset-password');
    expect(new URL(link).searchParams.get('token')).toBeTruthy();
    await page.goto(link);
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    const password = 'a brand new password 42';
    await page.getByLabel('New password').fill(password);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('status').filter({ hasText: 'Your password is changed' }).waitFor();
    await page.getByRole('link', { name: 'Sign in' }).click();

    // The old password no longer works; the new one does.
    await page.getByLabel('Email').fill(seller.email);
    await page.getByLabel('Password').fill(seller.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    await signInThroughUi(page, { email: seller.email, password });
    await expectMainNavigation();
  });

  it('past the account’s sign-in attempts, asks for the e-mailed code and signs in with it and the password', async () => {
    const { seller } = await sellerWithStore(server.url);
    // Someone else spent the account's attempts, each from an address of its own.
    for (let i = 0; i < 10; i++) {
      const guess = await fetch(`${server.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
        body: JSON.stringify({ email: seller.email, password: `guess ${i}` }),
      });
      expect(guess.status).toBe(401);
    }
    await page.goto(`${server.url}/dashboard/sign-in`);
    await page.getByRole('heading', { name: 'Sign in to svc' }).waitFor();
    await page.getByLabel('Email').fill(seller.email);
    await page.getByLabel('Password').fill(seller.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Too many sign-in attempts on this account' }).waitFor();
    const codeField = page.getByLabel('Sign-in code');
    await codeField.waitFor();
    expect(await page.evaluate(() => document.activeElement?.labels?.[0]?.textContent?.trim())).toBe('Sign-in code');
    await expectAccessible(page, 'sign-in asking for the e-mailed code');

    await codeField.fill(await signInCodeFor(seller.email));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/dashboard/sign-in'));
    await expectMainNavigation();
  });

  it('signs in and reaches Orders with the keyboard alone', async () => {
    const { seller, store } = await sellerWithStore(server.url);
    await page.goto(`${server.url}/dashboard/sign-in`);
    await page.getByRole('heading', { name: 'Sign in to svc' }).waitFor();

    const focused = () =>
      page.evaluate(() => {
        const element = document.activeElement;
        return {
          tag: element?.tagName.toLowerCase() ?? '',
          label: element?.labels?.[0]?.textContent?.trim() ?? element?.textContent?.trim() ?? '',
        };
      });
    /** Presses Tab until the focused element is `label` (at most `max` presses). */
    const tabTo = async (label: string, max = 30) => {
      for (let i = 0; i < max; i++) {
        await page.keyboard.press('Tab');
        if ((await focused()).label === label) return;
      }
      throw new Error(`Tab did not reach ${label} within ${max} presses`);
    };

    await tabTo('Email');
    await page.keyboard.type(seller.email);
    await page.keyboard.press('Tab');
    expect((await focused()).label).toBe('Password');
    await page.keyboard.type(seller.password);
    await page.keyboard.press('Enter');
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/dashboard/stores/${store.id}`);

    // The skip link comes first, then the banner, then the navigation.
    await page.keyboard.press('Tab');
    expect(await focused()).toEqual({ tag: 'a', label: 'Skip to content' });
    await tabTo('Orders');
    await page.keyboard.press('Enter');
    await page.waitForURL(storeUrl(server.url, store.id, '/orders'));
    await page.getByRole('heading', { name: 'Orders', level: 1 }).waitFor();
  });

  it('has no serious or critical axe violation on any screen of the shell, light or dark', async () => {
    const signedOut: Array<[string, string, string]> = [
      ['sign-in', '/dashboard/sign-in', 'Sign in to svc'],
      ['register', '/dashboard/register', 'Create your svc account'],
      ['forgot password', '/dashboard/forgot-password', 'Reset your password'],
      ['reset password', '/dashboard/reset-password?token=not-a-real-token', 'Choose a new password'],
    ];
    for (const [name, path, heading] of signedOut) {
      await page.goto(`${server.url}${path}`);
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      await expectAccessible(page, name);
    }
    // A sign-in that failed shows its error where it was taken.
    await page.goto(`${server.url}/dashboard/sign-in`);
    await page.getByLabel('Email').fill(uniqueEmail('nobody'));
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await expectAccessible(page, 'sign-in with an error');

    const { seller, store } = await sellerWithStore(server.url);
    await signInThroughUi(page, seller);
    await page.goto(`${server.url}/dashboard/stores/new`);
    await page.getByRole('heading', { name: 'Create a store', level: 1 }).waitFor();
    await expectAccessible(page, 'new store');

    for (const link of MAIN_NAV) {
      await page.goto(storeUrl(server.url, store.id, link.path));
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      await page.locator('main h1').first().waitFor();
      // The screen has settled: no loading line left.
      await expect
        .poll(() =>
          page
            .getByRole('status')
            .filter({ hasText: /Loading/ })
            .count(),
        )
        .toBe(0);
      await expectAccessible(page, `${link.name} (${link.path || '/'})`);
    }
  }, 180_000);
});
