/**
 * The storefront's cart page (/s/<subdomain>/cart), its one ES module: the SDK's theme client is
 * bundled into it (scripts/build-storefront.mjs). The cart itself is the client's `shop.cart`
 * (packages/sdk/src/theme-cart.ts, which the starter theme runs on too): product ids and
 * quantities in localStorage, one cart per store and mode, priced with GET /api/v1/cart, a coupon
 * checked with POST /api/coupons/validate, and `Checkout`, which opens the order with
 * POST /api/v1/checkout; the page goes to the hosted checkout page it answers. What is here is
 * the page's rendering.
 *
 * The store and product pages send `?add=<productId>&quantity=<n>` (and a recurring product's
 * `planId`) here (a plain form, so they need no script): this module moves it into the cart and
 * takes it off the address. A recurring line offers its plans as a radio group.
 */
import {
  cartTaxLine,
  createThemeClient,
  isSvcError,
  planLabel,
  SvcApiError,
  trialText,
  type Cart,
} from '@svc/sdk/theme';

const root = document.getElementById('cart')!;
const storeId = root.dataset.storeId!;
const subdomain = root.dataset.subdomain!;
const currency = root.dataset.currency!;
/** `?mode=test`: the store's test products, in a cart of their own, and links that keep the mode. */
const testMode = root.dataset.mode === 'test';
// A test page hands over the preview token that lets the API calls see the test products.
const shop = createThemeClient({
  baseUrl: location.origin,
  storeId,
  subdomain,
  mode: testMode ? 'test' : 'live',
  ...(testMode && root.dataset.preview ? { previewToken: root.dataset.preview } : {}),
});
const withMode = (path: string) => (testMode ? `${path}?mode=test` : path);

type Child = Node | string | null | false;

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Record<string, string | boolean> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value !== false) element.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) if (child !== null && child !== false) element.append(child);
  return element;
}

const format = new Intl.NumberFormat('en', { style: 'currency', currency });
const money = (amount: number) => format.format(amount);

/** `?add=<id>&quantity=<n>` from a store or product page: into the cart, off the address. */
function takeAddedProduct(): void {
  const params = new URLSearchParams(location.search);
  const productId = params.get('add');
  if (!productId) return;
  const quantity = Math.max(1, Math.min(10_000, Math.floor(Number(params.get('quantity') ?? '1')) || 1));
  shop.cart.add(productId, quantity, params.get('planId') || undefined);
  history.replaceState(null, '', withMode(location.pathname));
}

const status = root.querySelector<HTMLElement>('.status')!;

function setStatus(text: string): void {
  status.textContent = text;
}

/** What a failed call says: a refused field's own reason (a plan no longer sold) before the answer's summary. */
const errorText = (error: unknown) =>
  error instanceof SvcApiError
    ? (error.issues[0]?.message ?? error.message)
    : isSvcError(error)
      ? error.message
      : 'The connection failed. Check your network and try again.';

const NOTICES: Record<string, string> = {
  unknown_product: 'A product in your cart is no longer sold and was removed.',
  unavailable: 'A product in your cart is not available now and was removed.',
  out_of_stock: 'A product in your cart is sold out and was removed.',
  min_quantity: 'A quantity was raised to the smallest the seller sells.',
  max_quantity: 'A quantity was lowered to the most the seller sells at once.',
  stock: 'A quantity was lowered to the keys left in stock.',
};

function quantityInput(line: Cart['lines'][number]): HTMLInputElement {
  const input = h('input', {
    type: 'number',
    inputmode: 'numeric',
    min: '1',
    value: String(line.quantity),
    'aria-label': `Quantity of ${line.name}`,
  });
  input.addEventListener('change', () => {
    const quantity = Math.floor(Number(input.value));
    if (!Number.isFinite(quantity) || quantity < 1) return;
    shop.cart.update(line.productId, quantity);
    void refresh();
  });
  return input;
}

/** A recurring line's plans as a radio group: choosing one prices the cart again. */
function planChoice(line: Cart['lines'][number], index: number): HTMLFieldSetElement | null {
  if (line.plans.length === 0) return null;
  const choices = line.plans.map((plan) => {
    const id = `plan-${index}-${plan.id}`;
    const trial = trialText(plan);
    const input = h('input', {
      type: 'radio',
      name: `plan-${index}`,
      id,
      value: plan.id,
      checked: plan.id === line.planId,
      ...(trial ? { 'aria-describedby': `${id}-trial` } : {}),
    });
    input.addEventListener('change', () => {
      if (!input.checked) return;
      shop.cart.setPlan(line.productId, plan.id);
      void refresh();
    });
    return h(
      'div',
      { class: 'method' },
      input,
      h('label', { for: id }, planLabel(plan, line.plans, currency)),
      trial ? h('p', { class: 'hint', id: `${id}-trial` }, trial) : null,
    );
  });
  return h('fieldset', { class: 'methods plans' }, h('legend', {}, `Plan of ${line.name}`), ...choices);
}

function removeButton(line: Cart['lines'][number]): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'link', 'aria-label': `Remove ${line.name}` }, 'Remove');
  button.addEventListener('click', () => {
    shop.cart.remove(line.productId);
    void refresh();
  });
  return button;
}

function couponForm(
  cart: Cart,
  total: HTMLElement,
  discountRow: HTMLElement,
  taxRow: HTMLElement | null,
): HTMLFormElement {
  const input = h('input', {
    id: 'coupon',
    name: 'coupon',
    type: 'text',
    autocomplete: 'off',
    autocapitalize: 'characters',
    spellcheck: 'false',
    'aria-describedby': 'coupon-error',
  });
  const applied = shop.cart.coupon();
  if (applied) input.value = applied.code;
  const error = h('p', { id: 'coupon-error', class: 'field-error' });
  const result = h('p', { class: 'coupon-result', role: 'status' });
  const apply = h('button', { type: 'submit', class: 'secondary' }, 'Apply');
  const show = () => {
    const coupon = shop.cart.coupon();
    const discount = coupon?.discount ?? 0;
    discountRow.hidden = !coupon;
    discountRow.querySelector('dd')!.textContent = `−${money(discount)}`;
    const tax = cartTaxLine(cart, discount);
    total.textContent = tax ? tax.total : money(Math.max(0, cart.subtotal - discount));
    if (tax && taxRow) {
      taxRow.querySelector('dt')!.textContent = tax.label;
      taxRow.querySelector('dd')!.textContent = tax.amount;
    }
    result.textContent = coupon ? `${coupon.code} takes ${money(discount)} off.` : '';
  };
  const form = h(
    'form',
    { class: 'field', novalidate: true },
    h('label', { for: 'coupon' }, 'Coupon code'),
    h('div', { class: 'inline-row' }, input, apply),
    error,
    result,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const code = input.value.trim();
    error.textContent = '';
    input.removeAttribute('aria-invalid');
    if (!code) {
      shop.cart.removeCoupon();
      show();
      return;
    }
    apply.disabled = true;
    shop.cart
      .applyCoupon(code)
      .then((check) => {
        if (!check.valid) {
          input.setAttribute('aria-invalid', 'true');
          error.textContent = check.reason ?? 'This coupon does not work here.';
          input.focus();
        }
      })
      .catch((failure: unknown) => {
        input.setAttribute('aria-invalid', 'true');
        error.textContent = errorText(failure);
      })
      .finally(() => {
        apply.disabled = false;
        show();
      });
  });
  show();
  return form;
}

function checkoutButton(): HTMLElement {
  const alert = h('p', { class: 'form-error', role: 'alert', tabindex: '-1' });
  alert.hidden = true;
  const button = h('button', { type: 'button', class: 'primary' }, 'Checkout');
  button.addEventListener('click', () => {
    button.disabled = true;
    alert.hidden = true;
    // Once the order holds the lines, the cart starts again empty.
    shop.cart
      .checkout()
      .then(({ url }) => location.assign(url))
      .catch((failure: unknown) => {
        button.disabled = false;
        alert.textContent = errorText(failure);
        alert.hidden = false;
        alert.focus();
      });
  });
  return h('div', { class: 'cart-actions' }, alert, button);
}

function render(cart: Cart): void {
  const notices = [...cart.removed, ...cart.adjusted].map((change) => NOTICES[change.reason] ?? '');
  const content: Child[] = [...new Set(notices)].filter(Boolean).map((text) => h('p', { class: 'notice' }, text));
  if (cart.lines.length === 0) {
    setStatus('Your cart is empty.');
    content.push(h('p', {}, h('a', { href: withMode(`/s/${subdomain}`) }, 'See the products')));
  } else {
    setStatus('');
    const rows = cart.lines.map((line, index) =>
      h(
        'tr',
        {},
        h(
          'th',
          { scope: 'row' },
          h('a', { href: withMode(`/s/${subdomain}/products/${line.productId}`) }, line.name),
          planChoice(line, index),
        ),
        h('td', {}, quantityInput(line), removeButton(line)),
        h('td', { class: 'amount' }, money(line.lineTotal)),
      ),
    );
    const table = h(
      'table',
      { class: 'lines' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Product'),
          h('th', { scope: 'col' }, 'Quantity'),
          h('th', { scope: 'col', class: 'amount' }, 'Amount'),
        ),
      ),
      h('tbody', {}, ...rows),
    );
    const total = h('dd', { id: 'cart-total' });
    const discountRow = h('div', {}, h('dt', {}, 'Discount'), h('dd', {}));
    // Tax on: one row, its words and amount filled in by the coupon form's show().
    const taxRow =
      cart.taxBehavior === 'off'
        ? null
        : h('div', { class: cart.taxBehavior === 'inclusive' ? 'tax included' : 'tax' }, h('dt', {}), h('dd', {}));
    const included = cart.taxBehavior === 'inclusive';
    const totals = h(
      'dl',
      { class: 'totals' },
      h('div', {}, h('dt', {}, 'Subtotal'), h('dd', {}, money(cart.subtotal))),
      discountRow,
      included ? null : taxRow,
      h('div', { class: 'total' }, h('dt', {}, 'Total'), total),
      included ? taxRow : null,
    );
    content.push(
      h('div', { class: 'card' }, table, couponForm(cart, total, discountRow, taxRow), totals, checkoutButton()),
    );
  }
  root.replaceChildren(status, ...content.filter((child): child is Node => child instanceof Node));
}

const EMPTY: Cart = {
  storeId,
  currency,
  lines: [],
  removed: [],
  adjusted: [],
  subtotal: 0,
  taxAmount: 0,
  total: 0,
  taxBehavior: 'off',
  taxRate: null,
  taxCountry: null,
  reverseCharge: false,
  itemCount: 0,
};

async function refresh(): Promise<void> {
  if (shop.cart.lines().length > 0) setStatus('Loading your cart…');
  try {
    // Priced and kept as the store will sell it: removed lines leave, clamped quantities stay
    // clamped. An empty cart is not asked of the service (and has no coupon).
    const cart = (await shop.cart.load()) ?? EMPTY;
    // A coupon's discount was for the old cart: apply it again to the new one.
    const code = shop.cart.coupon()?.code;
    shop.cart.removeCoupon();
    render(cart);
    const input = document.getElementById('coupon') as HTMLInputElement | null;
    if (code && input) {
      input.value = code;
      input.form?.requestSubmit();
    }
  } catch (error) {
    // A plan archived since it was chosen: the line takes the product's first plan, and says so.
    if (!planRetried && isSvcError(error) && error.status === 400 && dropArchivedPlans()) {
      planRetried = true;
      await refresh();
      setStatus('A plan in your cart is no longer sold: choose one of the plans offered now.');
      return;
    }
    setStatus(errorText(error));
  }
}

let planRetried = false;

/** Takes the chosen plans off the stored lines (the service then prices each at its first active plan). */
function dropArchivedPlans(): boolean {
  const lines = shop.cart.lines();
  const chosen = lines.filter((line) => line.planId !== undefined);
  if (chosen.length === 0) return false;
  shop.cart.clear();
  for (const line of lines) shop.cart.add(line.productId, line.quantity);
  return true;
}

takeAddedProduct();
void refresh();
