import type { TCheckoutSession, TCheckoutStartResult } from '@svc/schemas';
/**
 * The checkout page (/checkout/<orderId>?token=...): the order summary, e-mail, the
 * products' custom fields, a coupon and the payment method, then POST /api/checkout/start.
 * A store that charges tax also asks for the billing country and an optional VAT id (billing.ts):
 * each change works the tax out again (POST /api/checkout/billing) and redraws the summary.
 * `test` goes to the local pay page, `stripe` to Stripe, `manual` shows the seller's
 * instructions and takes a proof upload. An order that is no longer pending goes to its
 * order page.
 */
import {
  api,
  checkoutToken,
  field,
  FormErrors,
  formAlert,
  h,
  isEmbedded,
  linkified,
  main,
  money,
  orderPagePath,
  proofForm,
  replaceContent,
  returnAddress,
  setStatus,
  showProblem,
  type Field,
} from './common.js';
import { billingFields, taxOn, taxRows, taxStatus } from './billing.js';

type CheckoutSession = TCheckoutSession;
type StartResult = TCheckoutStartResult;

const METHOD_LABELS: Record<string, { label: string; hint: string }> = {
  stripe: { label: 'Card', hint: 'Pay by card on Stripe’s secure page.' },
  manual: { label: 'Manual payment', hint: 'Pay as the seller instructs (bank transfer, etc.) and upload a proof.' },
  test: { label: 'Test payment', hint: 'No money moves; for trying the shop outside production.' },
};

const orderId = main().dataset.orderId!;
const token = checkoutToken(orderId);

async function load(): Promise<void> {
  const params = new URLSearchParams(location.search);
  // Back from Stripe: the order page waits for Stripe's notification.
  if (params.get('stripe') === 'success') {
    location.replace(orderPagePath('orders', orderId, token));
    return;
  }
  const answer = token
    ? await api<CheckoutSession>('POST', '/api/checkout/enter', { orderId, token })
    : await api<CheckoutSession>('GET', '/api/checkout/session');
  if (!answer.ok) {
    if (answer.status === 404) return showProblem('There is no such order.');
    if (answer.status === 401 || answer.status === 403)
      return showProblem('This link does not open the order. Use the link from your checkout or e-mail.');
    return showProblem(answer.error?.error ?? 'The order could not be loaded.');
  }
  const session = answer.body;
  if (session.order.id !== orderId)
    return showProblem('This link does not open the order. Use the link from your checkout or e-mail.');
  if (session.order.status !== 'pending') {
    location.replace(orderPagePath('orders', orderId, token));
    return;
  }
  document.title = `Checkout · ${session.store.name}`;
  render(session, params.get('stripe') === 'cancelled');
}

const ADVERBS: Record<string, string> = { day: 'daily', week: 'weekly', month: 'monthly', year: 'yearly' };
const DAY = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });

/** `Today: $0.00 · then $9.00 on 5 Dec 2026, monthly` (as the pay page and the storefront say it: plan-text.ts). */
function chargesText(session: CheckoutSession, today: number): string | null {
  const next = session.nextCharge;
  if (!next) return null;
  const cadence = next.intervalCount === 1 ? ADVERBS[next.interval] : `every ${next.intervalCount} ${next.interval}s`;
  const { currency } = session.order;
  return `Today: ${money(today, currency)} · then ${money(next.amount, currency)} on ${DAY.format(new Date(next.date))}, ${cadence}`;
}

function summary(
  session: CheckoutSession,
  price = session.order.price,
  discount = session.order.discount,
): HTMLElement {
  const { order } = session;
  const tax = taxRows(order);
  const rows = order.lines.map((line) =>
    h(
      'tr',
      {},
      h('th', { scope: 'row' }, line.productName),
      h('td', {}, String(line.quantity)),
      h('td', { class: 'amount' }, money(line.unitPrice * line.quantity, order.currency)),
    ),
  );
  return h(
    'section',
    { class: 'card order-summary', 'aria-labelledby': 'summary-heading' },
    h('h2', { id: 'summary-heading' }, `Order ${order.orderId} at ${session.store.name}`),
    h(
      'table',
      { class: 'lines' },
      h('caption', { class: 'visually-hidden' }, 'Items in this order'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Item'),
          h('th', { scope: 'col' }, 'Qty'),
          h('th', { scope: 'col', class: 'amount' }, 'Price'),
        ),
      ),
      h('tbody', {}, ...rows),
    ),
    h(
      'dl',
      { class: 'totals' },
      discount > 0 || taxOn(order)
        ? h('div', {}, h('dt', {}, 'Subtotal'), h('dd', {}, money(order.subtotal, order.currency)))
        : null,
      discount > 0 ? h('div', {}, h('dt', {}, 'Discount'), h('dd', {}, `−${money(discount, order.currency)}`)) : null,
      tax.beforeTotal,
      h('div', { class: 'total' }, h('dt', {}, 'Total'), h('dd', { id: 'order-total' }, money(price, order.currency))),
      tax.afterTotal,
    ),
    session.nextCharge ? h('p', { id: 'charges', class: 'charges' }, chargesText(session, price)) : null,
  );
}

/**
 * The order's summary and the step: one column (summary first), or from 64rem the step on the left
 * and the summary beside it (app.css), as hosted checkouts lay it out.
 */
function layout(orderSummary: HTMLElement, ...step: HTMLElement[]): HTMLElement {
  return h('div', { class: 'checkout-layout' }, orderSummary, h('div', { class: 'checkout-step' }, ...step));
}

function render(session: CheckoutSession, stripeCancelled: boolean): void {
  const { order } = session;
  // The session as last answered: a change of billing country answers it again, re-taxed.
  let current = session;
  const alert = formAlert();
  const errors = new FormErrors(alert);

  const email = field(
    'E-mail',
    { name: 'email', type: 'email', autocomplete: 'email', required: true, value: order.email || undefined },
    // Only a store that sends receipts promises one.
    session.receiptsEnabled
      ? 'Your receipt and the link to your order go here once you have paid.'
      : 'You can find this order again by signing in with this address.',
  );
  errors.register('email', email);

  const customInputs: Array<{ name: string; type: string; field: Field }> = [];
  for (const custom of session.customFields) {
    const previous = session.answers.find((answer) => answer.name === custom.name)?.value;
    const input = field(custom.name, {
      name: `custom-${custom.name}`,
      type: custom.type === 'number' ? 'text' : custom.type,
      inputmode: custom.type === 'number' ? 'decimal' : undefined,
      required: custom.required,
      value: custom.type === 'checkbox' ? undefined : previous,
      checked: custom.type === 'checkbox' && previous === 'true',
    });
    errors.register(`customFields.${custom.name}`, input);
    customInputs.push({ name: custom.name, type: custom.type, field: input });
  }

  const coupon =
    order.discount > 0
      ? null
      : field(
          'Coupon code',
          { name: 'coupon', type: 'text', autocomplete: 'off', autocapitalize: 'characters', spellcheck: 'false' },
          'Optional.',
        );
  const submit = h('button', { type: 'submit', class: 'primary' }, `Pay ${money(order.price, order.currency)}`);
  let reapplyCoupon: (() => Promise<void>) | null = null;
  if (coupon) {
    errors.register('coupon', coupon);
    // Apply shows what the code takes off before paying; checkout/start applies it for real.
    const apply = h('button', { type: 'button', class: 'secondary' }, 'Apply');
    const result = h('p', { class: 'coupon-result', role: 'status' });
    const row = h('div', { class: 'inline-row' }, coupon.input, apply);
    coupon.wrapper.insertBefore(row, coupon.error);
    coupon.wrapper.append(result);
    const reset = () => {
      result.textContent = '';
      submit.textContent = `Pay ${money(current.order.price, order.currency)}`;
      const charges = document.getElementById('charges');
      if (charges) charges.textContent = chargesText(current, current.order.price);
    };
    coupon.input.addEventListener('input', reset);
    const onApply = async (): Promise<void> => {
      const code = coupon.input.value.trim();
      reset();
      errors.clear();
      if (!code) return;
      const cart = order.lines
        .filter((line) => line.productId)
        .map((line) => ({ productId: line.productId!, quantity: line.quantity }));
      const answer = await api<{ valid: boolean; discount?: number; reason?: string }>(
        'POST',
        '/api/coupons/validate',
        { storeId: session.store.id, code, cart },
      );
      if (!answer.ok) return errors.show(answer, { rate_limited: 'coupon', coupon_invalid: 'coupon' });
      if (!answer.body.valid) {
        const reason = answer.body.reason ?? 'This coupon does not apply.';
        return errors.show({
          ok: false,
          status: 400,
          body: undefined,
          error: { error: reason, issues: [{ path: 'coupon', message: reason }] },
        });
      }
      const discount = answer.body.discount ?? 0;
      if (current.order.taxBehavior === 'exclusive' && current.order.taxAmount > 0) {
        // The tax on what is left is worked out per line when the coupon is applied for real.
        result.textContent = `${code.toUpperCase()} takes ${money(discount, order.currency)} off before VAT; the VAT on the rest is added when you pay.`;
        submit.textContent = 'Pay';
        return;
      }
      const total = Math.max(0, Math.round((current.order.subtotal - discount) * 100) / 100);
      result.textContent = `${code.toUpperCase()} takes ${money(discount, order.currency)} off: you pay ${money(total, order.currency)}.`;
      submit.textContent = `Pay ${money(total, order.currency)}`;
      const charges = document.getElementById('charges');
      if (charges) charges.textContent = chargesText(current, total);
    };
    apply.addEventListener('click', () => void onApply());
    reapplyCoupon = onApply;
  }

  const billing = taxOn(order) ? billingFields(order) : null;
  if (billing) {
    errors.register('country', billing.country);
    errors.register('taxId', billing.taxId);
    errors.register('billingName', billing.billingName);
    errors.register('billingAddress', billing.billingAddress);
    let asked = 0;
    const retax = async (): Promise<void> => {
      if (!token || !billing.country.input.value) return;
      const mine = ++asked;
      const shown = main().querySelector('.order-summary');
      shown?.setAttribute('aria-busy', 'true');
      const answer = await api<CheckoutSession>('POST', '/api/checkout/billing', {
        orderId,
        token,
        ...billing.values(),
      });
      // A later change is on its way: its answer is the one to show.
      if (mine !== asked) return;
      shown?.removeAttribute('aria-busy');
      if (!answer.ok) {
        if (answer.error?.code === 'order_not_pending')
          return location.replace(orderPagePath('orders', orderId, token));
        errors.show(answer, {}, false);
        billing.announce(
          answer.error?.issues?.[0]?.message ?? answer.error?.error ?? 'The tax could not be worked out.',
        );
        return;
      }
      errors.clear();
      current = answer.body;
      shown?.replaceWith(summary(current));
      submit.textContent = `Pay ${money(current.order.price, order.currency)}`;
      billing.announce(taxStatus(current.order));
      if (coupon?.input.value.trim()) await reapplyCoupon?.();
    };
    billing.country.input.addEventListener('change', () => void retax());
    billing.taxId.input.addEventListener('change', () => void retax());
  }

  // The method chosen before (back from a cancelled card payment), else the store's first.
  const preselected = (session.paymentMethods as string[]).includes(order.paymentMethod)
    ? order.paymentMethod
    : session.paymentMethods[0];
  const methodError = h('p', { id: 'method-error', class: 'field-error' });
  const methods = h(
    'fieldset',
    { class: 'methods', 'aria-describedby': 'method-error' },
    h('legend', {}, 'Payment method'),
    ...session.paymentMethods.map((method) => {
      const id = `method-${method}`;
      const info = METHOD_LABELS[method] ?? { label: method, hint: '' };
      return h(
        'div',
        { class: 'method' },
        h('input', {
          type: 'radio',
          name: 'paymentMethod',
          id,
          value: method,
          checked: method === preselected,
          'aria-describedby': `${id}-hint`,
        }),
        h('label', { for: id }, info.label),
        h('p', { id: `${id}-hint`, class: 'hint' }, info.hint),
      );
    }),
    methodError,
  );
  errors.register('paymentMethod', { input: methods, error: methodError });

  const form = h(
    'form',
    { novalidate: true, 'aria-labelledby': 'details-heading', class: 'card' },
    h('h2', { id: 'details-heading' }, 'Your details'),
    alert,
    email.wrapper,
    billing?.fieldset,
    ...customInputs.map((input) => input.field.wrapper),
    coupon?.wrapper,
    session.paymentMethods.length > 0 ? methods : h('p', { role: 'alert' }, 'This store takes no payments right now.'),
    session.paymentMethods.length > 0 ? submit : null,
  );

  const onSubmit = async (event: Event): Promise<void> => {
    event.preventDefault();
    if (!token) {
      errors.show({
        ok: false,
        status: 400,
        body: undefined,
        error: { error: 'Open the checkout with the link from your cart or e-mail.' },
      });
      return;
    }
    const chosen = form.querySelector<HTMLInputElement>('input[name="paymentMethod"]:checked');
    const customFields: Record<string, string | boolean> = {};
    for (const input of customInputs)
      customFields[input.name] = input.type === 'checkbox' ? input.field.input.checked : input.field.input.value;
    const body: Record<string, unknown> = { orderId, token, paymentMethod: chosen?.value ?? '' };
    if (email.input.value.trim()) body.email = email.input.value.trim();
    if (customInputs.length > 0) body.customFields = customFields;
    if (coupon?.input.value.trim()) body.coupon = coupon.input.value.trim();
    if (billing) {
      const { taxId, ...given } = billing.values();
      Object.assign(body, given, taxId ? { taxId } : {});
    }
    submit.disabled = true;
    submit.setAttribute('aria-busy', 'true');
    const answer = await api<StartResult>('POST', '/api/checkout/start', body);
    submit.disabled = false;
    submit.removeAttribute('aria-busy');
    if (!answer.ok) {
      if (answer.error?.code === 'order_not_pending') {
        location.replace(orderPagePath('orders', orderId, token));
        return;
      }
      errors.show(answer, { coupon_invalid: 'coupon', blacklisted: 'email' });
      return;
    }
    next(current, answer.body);
  };
  form.addEventListener('submit', (event) => void onSubmit(event));

  setStatus(stripeCancelled ? 'The card payment was cancelled. You can choose again.' : '');
  replaceContent(layout(summary(session), form));
}

/** Where the gateway sends the buyer. */
function next(session: CheckoutSession, started: StartResult): void {
  if (started.redirectUrl) {
    const target = new URL(started.redirectUrl, location.href);
    if (target.origin === location.origin) {
      // Our own pay step (the test gateway): it needs the token, as a framed page has no cookie.
      if (token) target.searchParams.set('token', token);
      if (isEmbedded()) target.searchParams.set('embed', '1');
      const back = returnAddress(orderId);
      if (back) target.searchParams.set('return', back);
      location.assign(target.toString());
      return;
    }
    if (isEmbedded()) {
      // A payment provider's page refuses to be framed: it opens as its own tab.
      const opened = window.open(target.toString(), '_blank', 'noopener');
      setStatus(
        opened === null
          ? 'Continue to the payment page:'
          : 'The payment page opened in a new tab. This window shows your order once it is paid.',
      );
      replaceContent(
        h('p', {}, h('a', { href: target.toString(), target: '_blank', rel: 'noopener' }, 'Open the payment page')),
        h('p', {}, h('a', { href: orderPagePath('orders', orderId, token) }, 'Go to your order')),
      );
      return;
    }
    location.assign(target.toString());
    return;
  }
  void manualPayment(session, started);
}

async function manualPayment(session: CheckoutSession, started: StartResult): Promise<void> {
  // A taxed order's discount and tax as the start left them: its session, read again.
  if (taxOn(session.order) && token) {
    const fresh = await api<CheckoutSession>('POST', '/api/checkout/enter', { orderId, token });
    if (fresh.ok) session = fresh.body;
  }
  const taxed = taxOn(session.order);
  const form = proofForm(orderId, token, () => {
    const next = new URL(orderPagePath('orders', orderId, token), location.href);
    next.searchParams.set('proof', 'sent');
    location.assign(next.toString());
  });
  setStatus('');
  replaceContent(
    layout(
      taxed ? summary(session) : summary(session, started.price, session.order.subtotal - started.price),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'instructions-heading' },
        h('h2', { id: 'instructions-heading', tabindex: '-1' }, 'How to pay'),
        h('p', { class: 'instructions' }, ...linkified(started.instructions ?? '')),
      ),
      form,
      h('p', {}, h('a', { href: orderPagePath('orders', orderId, token) }, 'Send the proof later: go to your order')),
    ),
  );
  main().querySelector<HTMLElement>('#instructions-heading')?.focus();
}

void load();
