/**
 * In a real browser: the dashboard's forms say what is wrong as sentences (@svc/schemas' error map,
 * the same the API answers with), not zod's text. A new product submitted empty asks for its name
 * and price; a minimum quantity above the maximum is said in words; a currency that is not ISO
 * 4217 is refused by the server with its sentence. (Where the sentence sits is the form's own
 * affair: the dashboard's field errors.)
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreFor, registerSeller } from '../support/seller.js';
import { signInThroughUi } from './dashboard-support.js';
import { launchChromium, pagePerTest, startPageServer } from './support.js';

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
pagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ page } = opened),
);

const ZOD_TEXT = /Too small|Too big|Invalid input|expected (string|number)|received undefined/;

describe("the dashboard's forms", () => {
  it('say what is missing or wrong as sentences', async () => {
    const seller = await registerSeller(server.url);
    const store = await createStoreFor(seller, 'Sentence Forge');
    await page.goto(`${server.url}/dashboard/stores/${store.id}/products/new`);
    await signInThroughUi(page, seller);
    await page.getByRole('heading', { name: 'New product', level: 1 }).waitFor();

    await page.getByRole('button', { name: 'Create product' }).click();
    await page.getByText('Enter a name.').waitFor();
    await page.getByText('Enter a price.').waitFor();
    expect(await page.locator('main').textContent()).not.toMatch(ZOD_TEXT);

    await page.getByLabel('Name').fill('Ranged');
    await page.getByLabel('Price').fill('5');
    await page.getByRole('checkbox', { name: 'Manual delivery' }).check();
    await page.getByLabel('Minimum quantity').fill('5');
    await page.getByLabel('Maximum quantity').fill('2');
    await page.getByRole('button', { name: 'Create product' }).click();
    await page.getByText("Minimum quantity can't be above the maximum.").waitFor();
    expect(await page.locator('main').textContent()).not.toMatch(ZOD_TEXT);

    await page.goto(`${server.url}/dashboard/stores/${store.id}/settings`);
    await page.getByLabel('Currency').fill('XYZ');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('XYZ is not a currency: use an ISO 4217 code such as USD or EUR.').waitFor();
    expect(await page.getByRole('status').filter({ hasText: 'Saved.' }).count()).toBe(0);
  });
});
