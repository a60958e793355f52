/**
 * In a real browser: the dashboard's products screens. A seller creates a license-key product,
 * imports 1,000 keys from a text file (and the same file again: all duplicates), sees the stock
 * counts and the masked list; creates a download product and uploads a file with its progress;
 * makes a recurring product, adds a yearly plan, is refused a saved plan's new period at the field,
 * archives a plan and sees each plan's subscriptions; and Home shows the MRR they make.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreFor, registerSeller, type Seller } from '../support/seller.js';
import { insertSubscriptions } from '../support/subscriptions.js';
import { expectAccessible } from './dashboard-support.js';
import {
  launchChromium,
  pagePerTest,
  SCREENSHOT_DIR,
  screenshots,
  startPageServer,
  unlabelledControls,
} from './support.js';

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

async function signIn(seller: Seller, to: string): Promise<void> {
  await page.goto(`${server.url}/dashboard/sign-in?redirect=${encodeURIComponent(to)}`);
  await page.getByLabel('Email').fill(seller.email);
  await page.getByLabel('Password').fill(seller.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

/** A poll that waits for a reload or a screen's queries on a loaded machine (the default is 1 s). */
const SLOW = { timeout: 15_000 };

/** Screenshots at 360, 390 and 1280 px, light and dark (the 360 and 1280 ones checked for sideways scrolling and contrast). */
async function shots(name: string): Promise<void> {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    await screenshots(page, `${name}-${colorScheme}`);
    const original = page.viewportSize()!;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${colorScheme}-390.png`), fullPage: true });
    await page.setViewportSize(original);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

async function newProduct(storeId: string, name: string, delivery: string): Promise<void> {
  await page.goto(`${server.url}/dashboard/stores/${storeId}/products`);
  await page.getByRole('heading', { name: 'Products', level: 1 }).waitFor();
  await page.getByRole('link', { name: 'New product' }).click();
  await page.getByRole('heading', { name: 'New product', level: 1 }).waitFor();
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Price').fill('19.99');
  await page.getByRole('checkbox', { name: delivery }).check();
  await page.getByRole('button', { name: 'Create product' }).click();
  await page.getByRole('heading', { name, level: 1 }).waitFor();
  await expectAccessible(page, `product page (${delivery})`);
}

describe('dashboard products', () => {
  it(
    'imports 1,000 keys from a file, counts a second import as duplicates, and lists them masked',
    { timeout: 60_000 },
    async () => {
      const seller = await registerSeller(server.url);
      const store = await createStoreFor(seller, 'Key Shop');
      await signIn(seller, `/dashboard/stores/${store.id}/products`);

      // The form refuses what the server's schema refuses, at the field.
      await page.getByRole('link', { name: 'New product' }).click();
      await page.getByRole('button', { name: 'Create product' }).click();
      await expect.poll(() => page.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
      expect(await unlabelledControls(page)).toEqual([]);

      await newProduct(store.id, 'Starship Game', 'License keys');
      const tag = randomBytes(3).toString('hex');
      const keys = Array.from({ length: 1000 }, (_, i) => `STAR-${tag}-${String(i).padStart(4, '0')}`);
      const file = { name: 'keys.txt', mimeType: 'text/plain', buffer: Buffer.from(`${keys.join('\n')}\n`) };
      const section = page.getByRole('region', { name: 'License keys' });
      const chooser = section.getByLabel('Or a text file of keys');

      await chooser.setInputFiles(file);
      await section.getByRole('button', { name: 'Import keys' }).click();
      await section.getByRole('status').filter({ hasText: '1000 added, 0 duplicates' }).waitFor();

      await chooser.setInputFiles(file);
      await section.getByRole('button', { name: 'Import keys' }).click();
      await section.getByRole('status').filter({ hasText: '0 added, 1000 duplicates' }).waitFor();

      // The counts are the product's, the list is a page of masked keys (never the key).
      await expect.poll(() => section.locator('dt:text-is("Available") + dd').textContent()).toBe('1000');
      expect(await section.locator('dt:text-is("Sold") + dd').textContent()).toBe('0');
      const table = section.getByRole('table', { name: 'License keys' });
      expect(await table.getByRole('row').count()).toBe(51); // the header and 50 keys
      expect(await table.getByText(/^•{8}\d{4}$/).count()).toBe(50);
      expect(await page.getByText(keys[0]!).count()).toBe(0);
      await section.getByRole('button', { name: 'Show more keys' }).click();
      await expect.poll(() => table.getByRole('row').count()).toBe(101);
      expect(await page.getByText('1000 available').count()).toBe(1); // the product's stock
      await screenshots(page, 'dashboard-product-keys');

      // Deleting a key asks first, and the confirming button repeats the verb; the row offers it in
      // its action menu, not as a red button on every row.
      expect(await table.getByRole('button', { name: /^Delete/ }).count()).toBe(0);
      await table
        .getByRole('button', { name: /^Actions for key/ })
        .first()
        .click();
      await page.getByRole('menuitem', { name: 'Delete' }).click();
      const dialog = page.getByRole('alertdialog', { name: 'Delete this key?' });
      await dialog.getByRole('button', { name: 'Delete' }).click();
      await dialog.waitFor({ state: 'detached' });
      await expect.poll(() => section.locator('dt:text-is("Available") + dd').textContent()).toBe('999');
    },
  );

  it(
    'edits the slug (a taken one is refused on the field) and adds, reorders and removes images',
    { timeout: 60_000 },
    async () => {
      const seller = await registerSeller(server.url);
      const store = await createStoreFor(seller, 'Picture Shop');
      await signIn(seller, `/dashboard/stores/${store.id}/products`);
      await newProduct(store.id, 'Sunset Print', 'Manual delivery');
      await newProduct(store.id, 'Dawn Print', 'Manual delivery');

      const edit = page.getByRole('region', { name: 'Edit product' });
      const slug = edit.getByLabel('Slug');
      expect(await slug.inputValue()).toBe('dawn-print');
      await slug.fill('sunset-print');
      await edit.getByRole('button', { name: 'Save changes' }).click();
      await edit.getByText('Another product of this store has this slug.').waitFor();
      expect(await slug.getAttribute('aria-invalid')).toBe('true');
      await slug.fill('dawn-print-a3');
      await edit.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      await expect.poll(() => edit.getByLabel('Slug').inputValue()).toBe('dawn-print-a3');

      const section = page.getByRole('region', { name: 'Images' });
      await section.getByText('No images yet').waitFor();
      for (const [colour, width] of [
        ['#cc0000', 600],
        ['#00cc00', 700],
      ] as const) {
        const picture = await sharp({ create: { width, height: 400, channels: 3, background: colour } })
          .png()
          .toBuffer();
        await section
          .getByLabel('Image', { exact: true })
          .setInputFiles({ name: `${width}.png`, mimeType: 'image/png', buffer: picture });
        await section.getByRole('button', { name: 'Upload' }).click();
        await section
          .getByRole('status')
          .filter({ hasText: `Uploaded ${width}.png.` })
          .waitFor();
      }
      const images = section.getByRole('img', { name: 'Dawn Print' });
      await expect.poll(() => images.count()).toBe(2);
      await expect
        .poll(() => images.evaluateAll((all: any[]) => all.map((img) => img.complete && img.naturalWidth)))
        .toEqual([480, 480]);
      await expectAccessible(page, 'product images');

      // The keyboard moves the second image up.
      await section.getByRole('button', { name: 'Move up image 2 of 2' }).focus();
      await page.keyboard.press('Enter');
      await section.getByRole('status').filter({ hasText: 'Image 2 is now image 1.' }).waitFor();
      const order = async () => {
        const shown = await (await fetch(`${server.url}/api/stores/by-subdomain/${store.subdomain}/storefront`)).json();
        const dawn = shown.products.find((p: { name: string }) => p.name === 'Dawn Print');
        return dawn.images.map((i: { variants: { width: number }[] }) => i.variants.at(-1)!.width);
      };
      await expect.poll(order).toEqual([700, 600]);
      expect(await section.getByRole('button', { name: 'Move up image 1 of 2' }).isDisabled()).toBe(true);

      await section.getByRole('button', { name: 'Remove image 1 of 2' }).click();
      await page
        .getByRole('alertdialog', { name: 'Remove image 1 of 2?' })
        .getByRole('button', { name: 'Remove' })
        .click();
      await expect.poll(() => images.count()).toBe(1);
      await expect.poll(order).toEqual([600]);
    },
  );

  it('uploads a file to a download product with a progress bar and lists it', { timeout: 60_000 }, async () => {
    const seller = await registerSeller(server.url);
    const store = await createStoreFor(seller, 'File Shop');
    await signIn(seller, `/dashboard/stores/${store.id}/products`);
    await newProduct(store.id, 'Field Guide', 'Download files');

    const section = page.getByRole('region', { name: 'Files' });
    await section.getByText('No files yet.').waitFor();
    await section
      .getByLabel('File', { exact: true })
      .setInputFiles({ name: 'guide.pdf', mimeType: 'application/pdf', buffer: randomBytes(300 * 1024) });
    await section.getByRole('button', { name: 'Upload' }).click();
    await section.getByRole('status').filter({ hasText: 'Uploaded guide.pdf.' }).waitFor();
    const table = section.getByRole('table', { name: 'Files' });
    await table.getByRole('cell', { name: 'guide.pdf', exact: true }).waitFor();
    expect(await table.getByRole('cell', { name: '300 KB' }).count()).toBe(1);
    await screenshots(page, 'dashboard-product-files');

    // Edit: instructions appear with their kind; the server's rules are the form's (min above max).
    const edit = page.getByRole('region', { name: 'Edit product' });
    await edit.getByRole('checkbox', { name: 'Delivery instructions' }).check();
    await edit.getByRole('textbox', { name: 'Delivery instructions' }).fill('Open the PDF with any reader.');
    await edit.getByRole('button', { name: 'Add custom field' }).click();
    await edit.getByLabel('Field 1 name').fill('Company');
    await edit.getByLabel('Minimum quantity').fill('5');
    await edit.getByLabel('Maximum quantity').fill('2');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => edit.getByLabel('Minimum quantity').getAttribute('aria-invalid')).toBe('true');
    await edit.getByLabel('Maximum quantity').fill('');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByText('Download files, Delivery instructions').waitFor();
    expect(await edit.getByLabel('Field 1 name').inputValue()).toBe('Company');

    await page.getByRole('button', { name: 'Archive' }).click();
    await page.getByRole('status').filter({ hasText: 'Archived' }).waitFor();
    expect(await page.getByRole('button', { name: 'Archive' }).count()).toBe(0);

    // The product list shows it, linked, with its delivery and no stock limit.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Products' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'Field Guide' }) });
    await row.waitFor();
    expect(await row.getByRole('cell').allTextContents()).toEqual([
      'Field Guide',
      'Archived',
      '$19.99',
      'Download files, Delivery instructions',
      'Not limited',
    ]);

    // Delete asks in a dialog whose button repeats the verb, then the list no longer has it.
    await row.getByRole('link', { name: 'Field Guide' }).click();
    await page.getByRole('heading', { name: 'Field Guide', level: 1 }).waitFor();
    // Delete is in the header's menu of secondary actions.
    await page.getByRole('button', { name: 'More actions' }).click();
    await page.getByRole('menuitem', { name: 'Delete', exact: true }).click();
    await page
      .getByRole('alertdialog', { name: 'Delete Field Guide?' })
      .getByRole('button', { name: 'Delete' })
      .click();
    await page.getByRole('heading', { name: 'Products', level: 1 }).waitFor();
    await page.getByText('No products yet.').waitFor();
  });
  it(
    "edits a recurring product's plans (add a yearly plan, archive one), counts each plan's subscriptions, and shows the MRR on Home",
    { timeout: 90_000 },
    async () => {
      const seller = await registerSeller(server.url);
      const store = await createStoreFor(seller, 'Plan Shop');
      await signIn(seller, `/dashboard/stores/${store.id}/products/new`);
      await page.getByRole('heading', { name: 'New product', level: 1 }).waitFor();
      await page.getByLabel('Name').fill('Editor Pro');
      await page.getByRole('radio', { name: 'Recurring' }).check();
      // A recurring product has no price of its own: its plans price it.
      expect(await page.getByLabel('Price', { exact: true }).count()).toBe(0);
      await page.getByLabel('Plan 1 price').fill('9');
      await page.getByLabel('Plan 1 trial days').fill('7');
      await page.getByRole('checkbox', { name: 'Manual delivery' }).check();
      await page.getByRole('button', { name: 'Create product' }).click();
      await page.getByRole('heading', { name: 'Editor Pro', level: 1 }).waitFor();
      const productId = page.url().split('/').at(-1)!;

      const plansCard = page.getByRole('region', { name: 'Plans' });
      const planRows = plansCard.getByRole('table', { name: 'Plans' }).getByRole('row');
      await expect
        .poll(() => planRows.nth(1).getByRole('cell').allTextContents(), SLOW)
        .toEqual(['Every month, 7-day trial', '$9.00', '0 active']);

      // Two live subscriptions and a test-mode one on the monthly plan.
      const product = await (await fetch(`${server.url}/api/stores/by-subdomain/${store.subdomain}/storefront`)).json();
      const monthlyPlan = product.products.find((p: { id: string }) => p.id === productId).plans[0].id as string;
      await insertSubscriptions(server.db.url, store.id, [
        { productId, planId: monthlyPlan },
        { productId, planId: monthlyPlan, quantity: 2 },
        { productId, planId: monthlyPlan, livemode: false },
      ]);
      await page.reload();
      await expect
        .poll(() => planRows.nth(1).getByRole('cell').allTextContents(), SLOW)
        .toEqual(['Every month, 7-day trial', '$9.00', '2 active']);

      // Add a yearly plan.
      const edit = page.getByRole('region', { name: 'Edit product' });
      await edit.getByRole('button', { name: 'Add plan' }).click();
      await edit.getByLabel('Plan 2 interval').selectOption('year');
      await edit.getByLabel('Plan 2 price').fill('90');
      await edit.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      await expect
        .poll(() => planRows.nth(2).getByRole('cell').allTextContents(), SLOW)
        .toEqual(['Every year', '$90.00', '0 active']);

      // A saved plan's period is the server's to refuse, said at its field.
      await edit.getByLabel('Plan 1 interval').selectOption('week');
      await edit.getByRole('button', { name: 'Save changes' }).click();
      await edit.getByText("A plan's billing period can't change").waitFor();
      expect(await edit.getByLabel('Plan 1 interval').getAttribute('aria-invalid')).toBe('true');
      await edit.getByLabel('Plan 1 interval').selectOption('month');

      // Archive the monthly plan: it stays, shown archived, with its subscriptions; the yearly one prices the product.
      await edit.getByRole('button', { name: 'Archive plan 1' }).click();
      await edit.getByRole('button', { name: 'Restore plan 1' }).waitFor();
      expect(await edit.getByLabel('Plan 1 price').count()).toBe(0);
      await edit.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      await expect
        .poll(() => planRows.nth(1).getByRole('cell').allTextContents(), SLOW)
        .toEqual(['Every month, 7-day trial Archived', '$9.00', '2 active']);
      await page.getByRole('region', { name: 'Summary' }).getByText('$90.00').waitFor();
      await edit.getByRole('button', { name: 'Restore plan 1' }).waitFor();
      expect(await unlabelledControls(page)).toEqual([]);
      await expectAccessible(page, 'recurring product page');
      await shots('dashboard-product-plans');

      // Home: 9.00 + 2 x 9.00 of live subscriptions (the test one is test mode's), beside today's figures.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Home' }).click();
      const figures = page.getByRole('region', { name: 'Subscriptions' });
      await expect.poll(() => figures.locator('dt:text-is("MRR") + dd').textContent(), SLOW).toBe('$27.00');
      expect(await figures.locator('dt:text-is("Active subscriptions") + dd').textContent()).toBe('2');
      expect(await figures.locator('dt:text-is("Churned (30 days)") + dd').textContent()).toBe('0');
      await page.getByRole('img', { name: /^MRR per month from .* \$27\.00 now\.$/ }).waitFor();
      const table = page.getByRole('table', { name: 'MRR per month' });
      expect(await table.getByRole('row').count()).toBe(13);
      expect(await table.getByRole('row').last().getByRole('cell').textContent()).toBe('$27.00');
      await expectAccessible(page, 'home with MRR');
      await shots('dashboard-home-mrr');
    },
  );
});
