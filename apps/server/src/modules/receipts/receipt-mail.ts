/**
 * What a receipt says, from plain data: the subject, the text and the HTML alternative. The HTML
 * is for mail clients: inline styles only, no remote images, no scripts, a real table with
 * headers for the lines, and every piece of seller or buyer text escaped. License keys are never
 * in it: the order's link opens them (docs/decisions.md #27 Receipts says why).
 */
import { escapeHtml } from '../../lib/html.js';
import { mailDocument } from '../mail/mail-html.js';
import { formatMoney } from '../../lib/money.js';

export interface ReceiptLine {
  productName: string;
  quantity: number;
  unitPriceMinor: number;
}

export interface ReceiptContent {
  storeName: string;
  /** `ORD-<n>`. */
  orderNumber: string;
  paidAt: Date;
  currency: string;
  lines: ReceiptLine[];
  subtotalMinor: number;
  /** What a coupon took off; 0 without one. */
  discountMinor: number;
  /** What the buyer paid for the order. */
  totalMinor: number;
  /** The gateway that settled it (`stripe`, `manual`, `test`). */
  paymentMethod: string;
  /** The buyer's own link to the order (orders/order-link.ts). */
  orderUrl: string;
  /** The order's invoice (a taxed order's): its number and the buyer's link to its PDF. */
  invoice?: { number: string; url: string } | undefined;
  /** The store's `receiptNote`; empty for none. */
  note: string;
  /**
   * The order is a subscription's renewal (`billingReason: 'subscription_cycle'`): the subject and
   * the opening say the subscription renewed, so the buyer does not read it as a new purchase.
   */
  renewal?: boolean;
}

export interface ReceiptMail {
  subject: string;
  text: string;
  html: string;
}

/** As the checkout page names the methods (client/js/checkout.ts). */
const PAYMENT_METHOD_LABELS: Record<string, string> = {
  stripe: 'Card',
  manual: 'Manual payment',
  test: 'Test payment',
};

const paidDate = new Intl.DateTimeFormat('en', {
  year: 'numeric',
  month: 'long',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
  timeZone: 'UTC',
  timeZoneName: 'short',
});

/** A header value on one line (a store name may hold a line break; a subject must not). */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex -- it matches control characters on purpose, to remove them
  return text.replace(/[\u0000-\u001F\u007F]+/g, ' ').trim();
}

const methodLabel = (method: string) => PAYMENT_METHOD_LABELS[method] ?? method;

export function receiptMail(receipt: ReceiptContent): ReceiptMail {
  const money = (minor: number) => formatMoney(minor, receipt.currency);
  const storeName = oneLine(receipt.storeName);
  // A renewal order has the subscription's one line: its product names the subscription.
  const renewedProduct = receipt.lines[0] ? `${oneLine(receipt.lines[0].productName)} ` : '';
  const renewed = receipt.renewal ? `Your ${renewedProduct}subscription from ${storeName} renewed` : null;
  const subject = renewed
    ? `${renewed} — ${receipt.orderNumber}`
    : `Your receipt from ${storeName} — ${receipt.orderNumber}`;
  const opening = renewed ?? `Thank you for your order from ${storeName}`;
  const date = paidDate.format(receipt.paidAt);
  const method = methodLabel(receipt.paymentMethod);
  const note = receipt.note.replace(/\r\n?/g, '\n').trim();
  const lines = receipt.lines.map((line) => ({
    name: line.productName,
    quantity: line.quantity,
    unit: money(line.unitPriceMinor),
    total: money(line.unitPriceMinor * line.quantity),
  }));
  const totals: Array<[label: string, amount: string]> = [];
  if (receipt.discountMinor > 0)
    totals.push(['Subtotal', money(receipt.subtotalMinor)], ['Discount', `−${money(receipt.discountMinor)}`]);
  totals.push(['Total', money(receipt.totalMinor)]);

  const text = [
    `${opening}.`,
    '',
    `Order ${receipt.orderNumber}, paid ${date}.`,
    '',
    ...lines.flatMap((line) => [`- ${line.name}`, `  ${line.quantity} × ${line.unit} = ${line.total}`]),
    '',
    ...totals.map(([label, amount]) => `${label}: ${amount}`),
    `Paid with: ${method}`,
    '',
    'Open your order (your license keys, downloads and instructions are there):',
    receipt.orderUrl,
    '',
    ...(receipt.invoice ? [`Your invoice ${receipt.invoice.number} (PDF):`, receipt.invoice.url, ''] : []),
    ...(note ? [note, ''] : []),
    'Anyone with this link can open your order, so keep this e-mail to yourself.',
  ].join('\n');

  const cell = 'padding:8px 6px;border-bottom:1px solid #d8d8d8;vertical-align:top;';
  const right = `${cell}text-align:right;white-space:nowrap;`;
  const href = escapeHtml(receipt.orderUrl);
  const html = mailDocument(
    subject,
    `<h1 style="margin:0 0 8px;font-size:22px;">${escapeHtml(opening)}</h1>
<p style="margin:0 0 16px;">Order <strong>${escapeHtml(receipt.orderNumber)}</strong>, paid ${escapeHtml(date)}.</p>
<table style="width:100%;border-collapse:collapse;margin:0 0 16px;">
<caption style="text-align:left;font-weight:bold;padding:0 0 8px;">What you bought</caption>
<thead>
<tr>
<th scope="col" style="${cell}text-align:left;">Item</th>
<th scope="col" style="${right}">Quantity</th>
<th scope="col" style="${right}">Unit price</th>
<th scope="col" style="${right}">Total</th>
</tr>
</thead>
<tbody>
${lines
  .map(
    (line) => `<tr>
<td style="${cell}">${escapeHtml(line.name)}</td>
<td style="${right}">${line.quantity}</td>
<td style="${right}">${escapeHtml(line.unit)}</td>
<td style="${right}">${escapeHtml(line.total)}</td>
</tr>`,
  )
  .join('\n')}
</tbody>
<tfoot>
${totals
  .map(
    ([label, amount]) => `<tr>
<th scope="row" colspan="3" style="${right}">${label}</th>
<td style="${right}${label === 'Total' ? 'font-weight:bold;' : ''}">${escapeHtml(amount)}</td>
</tr>`,
  )
  .join('\n')}
</tfoot>
</table>
<p style="margin:0 0 24px;">Paid with: ${escapeHtml(method)}</p>
<p style="margin:0 0 24px;"><a href="${href}" style="display:inline-block;padding:12px 20px;background:#1d4ed8;color:#ffffff;text-decoration:none;border-radius:6px;font-weight:bold;">Open your order</a></p>
<p style="margin:0 0 16px;font-size:14px;color:#4b4b4b;">Your license keys, downloads and instructions are on the order page. If the button does not work, copy this link into your browser:<br><a href="${href}" style="color:#1d4ed8;word-break:break-all;">${href}</a></p>
${
  receipt.invoice
    ? `<p style="margin:0 0 16px;">Your invoice: <a href="${escapeHtml(receipt.invoice.url)}" style="color:#1d4ed8;">${escapeHtml(receipt.invoice.number)} (PDF)</a></p>\n`
    : ''
}${note ? `<p style="margin:0 0 16px;padding:16px 0 0;border-top:1px solid #d8d8d8;">${escapeHtml(note).replace(/\n/g, '<br>\n')}</p>\n` : ''}<p style="margin:0;font-size:13px;color:#4b4b4b;">Anyone with this link can open your order, so keep this e-mail to yourself.</p>`,
  );
  return { subject, text, html };
}
