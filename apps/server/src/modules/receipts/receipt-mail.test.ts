/**
 * What a receipt says (receipt-mail.ts), from plain data: the subject on one line, the lines and
 * totals in the order's currency, the seller's and buyer's text escaped in the HTML, the note, the
 * link, and nothing fetched from elsewhere.
 */
import { describe, expect, it } from 'vitest';
import { receiptMail, type ReceiptContent } from './receipt-mail.js';

const URL_OF_ORDER = 'https://shop.example/orders/o1?token=abc&x=1';

function receipt(overrides: Partial<ReceiptContent> = {}): ReceiptContent {
  return {
    storeName: 'Pixel Forge',
    orderNumber: 'ORD-42',
    paidAt: new Date(Date.UTC(2026, 4, 4, 9, 30)),
    currency: 'USD',
    lines: [
      { productName: 'Font Pack', quantity: 1, unitPriceMinor: 1250 },
      { productName: 'Icons', quantity: 3, unitPriceMinor: 199 },
    ],
    subtotalMinor: 1847,
    discountMinor: 0,
    totalMinor: 1847,
    paymentMethod: 'stripe',
    orderUrl: URL_OF_ORDER,
    note: '',
    ...overrides,
  };
}

describe('receiptMail', () => {
  it('names the store and the order, each line, the total, the method, the date and the link', () => {
    const mail = receiptMail(receipt());
    expect(mail.subject).toBe('Your receipt from Pixel Forge — ORD-42');
    expect(mail.text).toBe(
      [
        'Thank you for your order from Pixel Forge.',
        '',
        'Order ORD-42, paid May 4, 2026 at 09:30 UTC.',
        '',
        '- Font Pack',
        '  1 × $12.50 = $12.50',
        '- Icons',
        '  3 × $1.99 = $5.97',
        '',
        'Total: $18.47',
        'Paid with: Card',
        '',
        'Open your order (your license keys, downloads and instructions are there):',
        URL_OF_ORDER,
        '',
        'Anyone with this link can open your order, so keep this e-mail to yourself.',
      ].join('\n'),
    );
    expect(mail.html).toContain('<th scope="col" style="');
    expect(mail.html).toMatch(
      /<td style="[^"]*">Icons<\/td>\s*<td style="[^"]*">3<\/td>\s*<td style="[^"]*">\$1\.99<\/td>/,
    );
    expect(mail.html).toContain('>$5.97</td>');
    expect(mail.html).toContain('>$18.47</td>');
    expect(mail.html).toContain('href="https://shop.example/orders/o1?token=abc&amp;x=1"');
    expect(mail.html).toContain('Paid with: Card');
    expect(mail.html).not.toContain('Discount');
  });

  it('shows the subtotal and the discount when a coupon took something off', () => {
    const mail = receiptMail(receipt({ discountMinor: 347, totalMinor: 1500 }));
    expect(mail.text).toContain('Subtotal: $18.47\nDiscount: −$3.47\nTotal: $15.00');
    expect(mail.html).toMatch(
      /<th scope="row" colspan="3" style="[^"]*">Discount<\/th>\s*<td style="[^"]*">−\$3\.47<\/td>/,
    );
  });

  it('writes amounts in the order’s currency and its places', () => {
    const mail = receiptMail(
      receipt({
        currency: 'JPY',
        lines: [{ productName: 'Game', quantity: 2, unitPriceMinor: 1500 }],
        subtotalMinor: 3000,
        totalMinor: 3000,
      }),
    );
    expect(mail.text).toContain('  2 × ¥1,500 = ¥3,000');
    expect(mail.text).toContain('Total: ¥3,000');
  });

  it('escapes the store’s, the products’ and the note’s text in the HTML, and keeps the subject on one line', () => {
    const mail = receiptMail(
      receipt({
        storeName: `Tom & Jerry's\r\n<script>alert(1)</script>`,
        lines: [{ productName: '<img src=x onerror=alert(1)> "Deluxe"', quantity: 1, unitPriceMinor: 100 }],
        subtotalMinor: 100,
        totalMinor: 100,
        note: 'Support: help@shop.example\r\n<b>Thanks</b> & see you',
        paymentMethod: 'crypto<x>',
      }),
    );
    expect(mail.subject).toBe(`Your receipt from Tom & Jerry's <script>alert(1)</script> — ORD-42`);
    expect(mail.subject).not.toMatch(/[\r\n]/);
    expect(mail.html).not.toMatch(/<script|<img|<b>/);
    expect(mail.html).toContain('Tom &amp; Jerry&#39;s &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mail.html).toContain('&lt;img src=x onerror=alert(1)&gt; &quot;Deluxe&quot;');
    expect(mail.html).toContain('Support: help@shop.example<br>\n&lt;b&gt;Thanks&lt;/b&gt; &amp; see you');
    expect(mail.html).toContain('Paid with: crypto&lt;x&gt;');
    // The text is text: the note as written (line breaks normalised), before the closing line.
    expect(mail.text).toContain(
      `${URL_OF_ORDER}\n\nSupport: help@shop.example\n<b>Thanks</b> & see you\n\nAnyone with`,
    );
  });

  it('says a subscription renewed for a renewal order, the rest as for any order', () => {
    const content = receipt({
      renewal: true,
      lines: [{ productName: 'Editor <Pro>', quantity: 2, unitPriceMinor: 900 }],
      subtotalMinor: 1800,
      totalMinor: 1800,
    });
    const mail = receiptMail(content);
    expect(mail.subject).toBe('Your Editor <Pro> subscription from Pixel Forge renewed — ORD-42');
    expect(mail.text).toBe(
      [
        'Your Editor <Pro> subscription from Pixel Forge renewed.',
        '',
        'Order ORD-42, paid May 4, 2026 at 09:30 UTC.',
        '',
        '- Editor <Pro>',
        '  2 × $9.00 = $18.00',
        '',
        'Total: $18.00',
        'Paid with: Card',
        '',
        'Open your order (your license keys, downloads and instructions are there):',
        URL_OF_ORDER,
        '',
        'Anyone with this link can open your order, so keep this e-mail to yourself.',
      ].join('\n'),
    );
    expect(mail.html).toContain('>Your Editor &lt;Pro&gt; subscription from Pixel Forge renewed</h1>');
    expect(mail.html).toContain(
      '<title>Your Editor &lt;Pro&gt; subscription from Pixel Forge renewed — ORD-42</title>',
    );
    expect(mail.html).not.toContain('Thank you for your order');
    // Not a renewal: the receipt as it always was.
    expect(receiptMail({ ...content, renewal: false }).subject).toBe('Your receipt from Pixel Forge — ORD-42');
  });

  it('fetches nothing: no images, stylesheets, scripts or remote URLs besides the order link', () => {
    const { html } = receiptMail(receipt({ note: 'See https://elsewhere.example' }));
    expect(html).not.toMatch(/<img|<link|<script|<style|<iframe|url\(|src=/i);
    const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((match) => match[1]);
    expect(new Set(hrefs)).toEqual(new Set(['https://shop.example/orders/o1?token=abc&amp;x=1']));
  });
  it('links the invoice when the order has one, and says nothing of one otherwise', () => {
    const invoice = { number: 'INV-2026-7', url: 'https://shop.example/api/orders/o1/invoice?token=abc&x=1' };
    const mail = receiptMail(receipt({ invoice }));
    expect(mail.text).toContain(
      'Your invoice INV-2026-7 (PDF):\nhttps://shop.example/api/orders/o1/invoice?token=abc&x=1\n',
    );
    expect(mail.html).toContain(
      '<a href="https://shop.example/api/orders/o1/invoice?token=abc&amp;x=1" style="color:#1d4ed8;">INV-2026-7 (PDF)</a>',
    );
    const without = receiptMail(receipt());
    expect(without.text).not.toContain('invoice');
    expect(without.html).not.toContain('invoice');
  });
});
