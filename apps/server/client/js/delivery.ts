/**
 * The order page (/orders/<orderId>[?token=...]): waits for the payment without a reload
 * (polls GET /api/orders/<id>/delivery, which answers 409 until the order is paid), then
 * shows the goods: license keys with a copy button, file links, instructions, the state of
 * a manual delivery. Opened with the token link, the svc_checkout cookie, or a customer
 * session (from the customer area).
 */
import {
  api,
  checkoutToken,
  date,
  h,
  isEmbedded,
  linkified,
  main,
  money,
  orderPagePath,
  proofForm,
  replaceContent,
  setStatus,
  showProblem,
} from './common.js';

interface Delivery {
  orderId: string;
  status: string;
  methods: string[];
  licenseKeys?: Array<{ productId: string | null; productName: string | null; key: string }>;
  downloadFiles?: Array<{ id: string; name: string; size: number; url: string }>;
  manualDelivery?: { status: 'pending' | 'delivered'; content: string };
  deliveryInstructions?: Array<{ productId: string | null; text: string }>;
  customFields: Array<{ name: string; value: string }>;
}

interface Summary {
  orderId: string;
  status: string;
  paymentMethod?: string;
  storeSubdomain?: string;
  price: number;
  currency: string;
  createdAt: string;
  lines: Array<{ productName: string; quantity: number }>;
  storeName?: string;
  /** A taxed order's invoice, once paid, and its credit note, once refunded. */
  invoiceNumber?: string | null;
  creditNoteNumber?: string | null;
}

const orderId = main().dataset.orderId!;
const token = checkoutToken(orderId);
const query = token ? `?token=${encodeURIComponent(token)}` : '';

/** Polling: every 2 s while unpaid (slower after 10 minutes), every 5 s while a delivery is still owed. */
const startedAt = Date.now();
/** Arrived from the checkout right after sending a manual payment's proof. */
const proofSent = new URLSearchParams(location.search).get('proof') === 'sent';
let summary: Summary | null = null;
let timer: number | undefined;

function schedule(ms: number): void {
  window.clearTimeout(timer);
  timer = window.setTimeout(() => void poll(), ms);
}

/** The order's number, lines and total, from whichever credential this page has. */
async function loadSummary(): Promise<void> {
  if (token) {
    const answer = await api<{ order: Summary; store: { name: string; subdomain: string } }>(
      'POST',
      '/api/checkout/enter',
      { orderId, token },
    );
    if (answer.ok)
      summary = {
        ...answer.body.order,
        storeName: answer.body.store.name,
        storeSubdomain: answer.body.store.subdomain,
      };
    return;
  }
  const session = await api<{ order: Summary & { id: string }; store: { name: string; subdomain: string } }>(
    'GET',
    '/api/checkout/session',
  );
  if (session.ok && session.body.order.id === orderId) {
    summary = {
      ...session.body.order,
      storeName: session.body.store.name,
      storeSubdomain: session.body.store.subdomain,
    };
    return;
  }
  const customer = await api<Summary>('GET', `/api/customer/orders/${encodeURIComponent(orderId)}`);
  if (customer.ok) summary = customer.body;
}

/** Where the buyer finds all their orders in the store (known when the order came with its link). */
function accountLink(): HTMLElement | null {
  if (!summary?.storeSubdomain) return null;
  // The customer area refuses to be framed: from the embed overlay it opens as its own tab.
  const framed = isEmbedded();
  return h(
    'p',
    { class: 'more' },
    h(
      'a',
      {
        href: `/account/${encodeURIComponent(summary.storeSubdomain)}`,
        target: framed ? '_blank' : undefined,
        rel: framed ? 'noopener' : undefined,
      },
      `All your orders at ${summary.storeName ?? 'this store'}`,
    ),
  );
}

function heading(): HTMLElement | null {
  if (!summary) return null;
  const items = summary.lines
    .map((line) => `${line.productName}${line.quantity > 1 ? ` × ${line.quantity}` : ''}`)
    .join(', ');
  return h(
    'dl',
    { class: 'summary card' },
    h('div', {}, h('dt', {}, 'Order'), h('dd', {}, summary.orderId)),
    summary.storeName ? h('div', {}, h('dt', {}, 'Store'), h('dd', {}, summary.storeName)) : null,
    h('div', {}, h('dt', {}, 'Items'), h('dd', {}, items)),
    h('div', {}, h('dt', {}, 'Total'), h('dd', {}, money(summary.price, summary.currency))),
    h('div', {}, h('dt', {}, 'Placed'), h('dd', {}, date(summary.createdAt))),
  );
}

const STATUS_TEXT: Record<string, string> = {
  paid: 'Paid. Preparing your goods…',
  processing: 'Paid. Part of your order is still on its way; this page updates by itself.',
  completed: 'Paid and delivered.',
  refunded: 'This order was refunded; its goods are no longer available.',
};

async function copy(text: string, source: HTMLElement, result: HTMLElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    result.textContent = 'Copied.';
    return;
  } catch {
    // No clipboard API (an insecure origin or a refused permission): select the text and copy that.
  }
  const selection = window.getSelection();
  const range = document.createRange();
  range.selectNodeContents(source);
  selection?.removeAllRanges();
  selection?.addRange(range);
  let copied: boolean;
  try {
    copied = document.execCommand('copy');
  } catch {
    copied = false;
  }
  result.textContent = copied ? 'Copied.' : 'The key is selected: copy it with your keyboard or menu.';
}

/**
 * The invoice (and credit note) PDFs, through the same access as this page: the token in the
 * address, or the cookie or customer session the browser sends with the link.
 */
function documentLinks(): HTMLElement | null {
  if (!summary?.invoiceNumber) return null;
  const link = (segment: string, text: string) =>
    h('li', {}, h('a', { href: `/api/orders/${encodeURIComponent(orderId)}/${segment}${query}` }, text));
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'documents-heading' },
    h('h2', { id: 'documents-heading' }, 'Invoice'),
    h(
      'ul',
      { class: 'files' },
      link('invoice', `Invoice (PDF) ${summary.invoiceNumber}`),
      summary.creditNoteNumber ? link('credit-note', `Credit note (PDF) ${summary.creditNoteNumber}`) : null,
    ),
  );
}

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function render(delivery: Delivery): void {
  const sections: HTMLElement[] = [];
  const keys = delivery.licenseKeys ?? [];
  if (delivery.methods.includes('licenseKeys')) {
    sections.push(
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'keys-heading' },
        h('h2', { id: 'keys-heading' }, keys.length === 1 ? 'Your license key' : 'Your license keys'),
        keys.length === 0
          ? h(
              'p',
              {},
              delivery.status === 'refunded'
                ? 'No keys: the order was refunded.'
                : 'Your keys are on their way; this page shows them as soon as they are assigned.',
            )
          : h(
              'ul',
              { class: 'keys' },
              ...keys.map((key, index) => {
                const code = h('code', { id: `key-${index}`, class: 'key' }, key.key);
                const result = h('span', { class: 'copy-result', role: 'status' });
                const button = h(
                  'button',
                  { type: 'button', class: 'secondary', 'aria-describedby': `key-label-${index}` },
                  'Copy',
                );
                button.addEventListener('click', () => void copy(key.key, code, result));
                return h(
                  'li',
                  {},
                  h('span', { class: 'key-label', id: `key-label-${index}` }, key.productName ?? 'License key'),
                  h('div', { class: 'key-row' }, code, button),
                  result,
                );
              }),
            ),
      ),
    );
  }
  const files = delivery.downloadFiles ?? [];
  if (delivery.methods.includes('downloadFiles')) {
    sections.push(
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'files-heading' },
        h('h2', { id: 'files-heading' }, 'Downloads'),
        files.length === 0
          ? h('p', {}, 'No files yet.')
          : h(
              'ul',
              { class: 'files' },
              ...files.map((file) =>
                h(
                  'li',
                  {},
                  h('a', { href: file.url, download: file.name }, file.name),
                  h('span', { class: 'hint' }, ` ${sizeText(file.size)}`),
                ),
              ),
            ),
        files.length > 0
          ? h('p', { class: 'hint' }, 'Download links work for an hour; reopen this page for fresh ones.')
          : null,
      ),
    );
  }
  if (delivery.manualDelivery) {
    const manual = delivery.manualDelivery;
    sections.push(
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'manual-heading' },
        h('h2', { id: 'manual-heading' }, 'Delivery by the seller'),
        manual.status === 'delivered'
          ? h(
              'div',
              {},
              h('p', { class: 'delivered' }, 'Delivered.'),
              manual.content ? h('p', { class: 'instructions' }, ...linkified(manual.content)) : null,
            )
          : h('p', { class: 'pending' }, 'The seller delivers this by hand. This page updates by itself when they do.'),
      ),
    );
  }
  const instructions = delivery.deliveryInstructions ?? [];
  if (instructions.length > 0) {
    sections.push(
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'instructions-heading' },
        h('h2', { id: 'instructions-heading' }, 'Instructions'),
        ...instructions.map((item) => h('p', { class: 'instructions' }, ...linkified(item.text))),
      ),
    );
  }
  if (delivery.customFields.length > 0) {
    sections.push(
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'answers-heading' },
        h('h2', { id: 'answers-heading' }, 'Your answers'),
        h(
          'dl',
          { class: 'summary' },
          ...delivery.customFields.map((answer) => h('div', {}, h('dt', {}, answer.name), h('dd', {}, answer.value))),
        ),
      ),
    );
  }
  setStatus(STATUS_TEXT[delivery.status] ?? delivery.status);
  replaceContent(heading(), ...sections, documentLinks(), accountLink());
}

let lastRendered = '';
let polls = 0;

async function poll(): Promise<void> {
  polls += 1;
  const answer = await api<Delivery>('GET', `/api/orders/${encodeURIComponent(orderId)}/delivery${query}`);
  if (answer.ok) {
    const delivery = answer.body;
    if (!summary || summary.status !== delivery.status) await loadSummary();
    // Re-render only on change, so focus and selection stay where the buyer left them.
    const fingerprint = JSON.stringify(delivery, (key, value: unknown) => (key === 'url' ? undefined : value));
    if (fingerprint !== lastRendered) {
      lastRendered = fingerprint;
      render(delivery);
    }
    const owed =
      delivery.status === 'paid' || delivery.status === 'processing' || delivery.manualDelivery?.status === 'pending';
    if (owed && delivery.status !== 'refunded') schedule(5000);
    return;
  }
  if (answer.status === 409) {
    if (!summary || polls % 10 === 0) await loadSummary();
    if (summary && (summary.status === 'expired' || summary.status === 'cancelled')) {
      return showProblem(
        summary.status === 'expired' ? 'This order expired before it was paid.' : 'This order was cancelled.',
        heading(),
      );
    }
    if (lastRendered !== 'waiting') {
      lastRendered = 'waiting';
      setStatus('Waiting for your payment. This page updates by itself once it arrives.', true);
      // A manual payment's proof can be sent (again) from here, with the order's token.
      const sent = h(
        'p',
        { class: 'notice' },
        'Thank you: the seller has your proof of payment and confirms the payment soon.',
      );
      const proof = proofSent
        ? sent
        : summary?.status === 'pending' && summary.paymentMethod === 'manual' && token
          ? proofForm(orderId, token, () => {
              proof!.replaceWith(sent);
              setStatus('Proof sent. Waiting for the seller to confirm your payment.', true);
            })
          : null;
      replaceContent(
        heading(),
        proof,
        summary?.status === 'pending'
          ? h('p', {}, h('a', { href: orderPagePath('checkout', orderId, token) }, 'Back to the checkout'))
          : null,
      );
    }
    schedule(Date.now() - startedAt < 10 * 60_000 ? 2000 : 15_000);
    return;
  }
  if (answer.status === 401 || answer.status === 403) {
    return showProblem(
      'This page opens with the link from your checkout, or after you sign in to your account at the store.',
    );
  }
  if (answer.status === 404) return showProblem('There is no such order.');
  // A network hiccup or a busy server: keep trying, more slowly.
  setStatus(answer.error?.error ?? 'The order could not be loaded; trying again…');
  schedule(10_000);
}

void poll();
