/**
 * In a real browser: the dashboard's Tax screen (issue #42). Reached from the `Main` navigation, it
 * shows this quarter by default; a seller picks a period with the keyboard alone (the days go to
 * the URL), reads the rows and totals the test's own sums give for the orders it wrote, and
 * downloads the same rows as CSV.
 */
import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible } from './dashboard-support.js';
import { createShop, launchChromium, pagePerTest, startPageServer, unlabelledControls, type Shop } from './support.js';
import { expectedTaxReport, insertTaxedOrders, taxedOrder } from '../support/tax-orders.js';

let server: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser;
let page: Page;
let shop: Shop;

const COUNT = 2_000;

beforeAll(async () => {
  [server, browser] = await Promise.all([startPageServer(), launchChromium()]);
  shop = await createShop(server.url, 'Tax Shop');
  await insertTaxedOrders(server.db.url, shop.store.id, COUNT);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});
pagePerTest(
  () => ({ browser, serviceUrl: server.url }),
  (opened) => ({ page } = opened),
);

/** A screen's state once it shows (vitest's own poll gives up after 1 s; a loaded machine needs longer). */
function poll<T>(read: () => T | Promise<T>) {
  return expect.poll(read, { timeout: 10_000 });
}

/** The table's body rows as their cells' text. */
async function bodyRows(): Promise<string[][]> {
  const table = page.getByRole('table', { name: 'Tax by country and rate' });
  return table
    .locator('tbody tr')
    .evaluateAll((rows: any[]) =>
      rows.map((row) => Array.from(row.querySelectorAll('td') as ArrayLike<any>).map((cell: any) => cell.textContent)),
    );
}

describe('dashboard Tax', { timeout: 60_000 }, () => {
  it("shows a period's report, chosen with the keyboard, and downloads it as CSV", async () => {
    const [name, value] = shop.seller.cookie.split('=') as [string, string];
    await page.context().addCookies([{ name, value, url: server.url }]);
    await page.goto(`${server.url}/dashboard/stores/${shop.store.id}`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tax' }).click();
    await page.getByRole('heading', { level: 1, name: 'Tax' }).waitFor();

    // This quarter by default (UTC days): nothing was invoiced in it.
    const now = new Date();
    const first = Math.floor(now.getUTCMonth() / 3) * 3;
    const quarterStart = new Date(Date.UTC(now.getUTCFullYear(), first, 1)).toISOString().slice(0, 10);
    expect(await page.getByLabel('From', { exact: true }).inputValue()).toBe(quarterStart);
    await page.getByRole('cell', { name: 'No invoices or credit notes in this period.' }).waitFor();
    expect(await unlabelledControls(page)).toEqual([]);

    // April 2026 in the date fields, sent with Enter from the last one.
    await page.getByLabel('From', { exact: true }).fill('2026-04-01');
    await page.getByLabel('To', { exact: true }).fill('2026-04-30');
    await page.getByLabel('To', { exact: true }).press('Enter');
    await poll(() => new URL(page.url()).searchParams.get('to')).toBe('2026-04-30');
    expect(new URL(page.url()).searchParams.get('from')).toBe('2026-04-01');

    const expected = expectedTaxReport(
      Array.from({ length: COUNT }, (_, i) => taxedOrder(i + 1)),
      Date.UTC(2026, 3, 1),
      Date.UTC(2026, 4, 1),
      true,
    );
    await poll(async () => (await bodyRows()).length).toBe(expected.length);
    const rows = await bodyRows();
    // Country, reverse charge, invoices and credit notes as the test counted them, in the report's order.
    expect(rows.map((cells) => [cells[0], cells[2], cells[5], cells[6]])).toEqual(
      expected.map((row) => [
        row.country,
        row.reverseCharge ? 'Yes' : 'No',
        String(row.invoices),
        String(row.creditNotes),
      ]),
    );
    const totals = page.getByRole('table', { name: 'Tax by country and rate' }).locator('tfoot tr');
    expect(await totals.count()).toBe(new Set(expected.map((row) => row.currency)).size);
    await page.getByRole('rowheader', { name: 'Total (EUR)' }).waitFor();

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('tax-report-2026-04-01-2026-05-01.csv');
    const csv = (await readFile(await download.path(), 'utf8')).trimEnd().split('\r\n');
    expect(csv[0]).toBe('country,rate,reverse_charge,currency,taxable,tax,invoices,credit_notes');
    expect(csv.slice(1).map((line) => Math.round(Number(line.split(',')[4]) * 100))).toEqual(
      expected.map((row) => row.taxableMinor),
    );
    await expectAccessible(page, 'the Tax screen');
  });
});
