/**
 * cart.html, the cart: the buyer's cart (`shop.cart`, kept in localStorage) priced by the service
 * (`shop.cart.load()`, the procedure behind GET /api/v1/cart), quantities and `Remove`, a coupon
 * field (`shop.cart.applyCoupon`), and `Checkout`, which opens the order (`shop.cart.checkout()`)
 * and goes to the hosted checkout page it answers, where the buyer pays. The cart's logic is the
 * SDK's; this page is its rendering.
 */
import { configured, errorText, h, money, planChoice, productHref, shop, showStore, subdomain } from './shop.js';
import { cartTaxLine, SvcApiError, type Cart } from '@svc/sdk/theme';

const root = document.getElementById('cart')!;
const status = root.querySelector<HTMLElement>('.status')!;
/** Product slugs by id, for links back to the product pages. */
const slugs = new Map<string, string>();
/** The store's name and look, and the products' slugs; loaded beside the cart, never failing it. */
const storeShown = configured()
  ? shop.storefront().then(
      ({ store, products }) => {
        showStore(store, 'Your cart');
        for (const product of products) slugs.set(product.id, product.slug);
      },
      () => undefined, // the cart says what failed, if anything does
    )
  : Promise.resolve();

/** Where this tab keeps the billing country the buyer chose, so the cart keeps its tax line across pages. */
const BILLING_KEY = `svc-billing-country:${subdomain}`;
try {
  const kept = sessionStorage.getItem(BILLING_KEY);
  if (kept) shop.cart.setBilling({ country: kept });
} catch {
  // Storage refused (private mode): the cart is priced for the request's own country until chosen.
}

/** Sets the billing country the cart is priced for (none: the request's own), kept for the tab. */
function keepBillingCountry(country: string | undefined): void {
  shop.cart.setBilling({ country });
  try {
    if (country) sessionStorage.setItem(BILLING_KEY, country);
    else sessionStorage.removeItem(BILLING_KEY);
  } catch {
    // Kept for this page only.
  }
}

/**
 * Region codes the browser names that are not ISO 3166-1 countries: groups (EU, UN), unknown and
 * pseudo regions, codes reserved for territories the standard leaves out, and XK (user-assigned).
 */
const NOT_COUNTRIES = new Set([
  'EU',
  'EZ',
  'UN',
  'QO',
  'XA',
  'XB',
  'ZZ',
  'AC',
  'CP',
  'CQ',
  'DG',
  'EA',
  'IC',
  'TA',
  'XK',
]);

/**
 * The countries, named by the browser (Intl.DisplayNames), A-Z by name: every two-letter region
 * code it names, less the ones above and the retired ones (DD, SU, YU: codes the browser
 * canonicalises to today's, Intl.getCanonicalLocales). The service checks the one chosen.
 */
let countryList: Array<{ code: string; name: string }> | undefined;
function countries(): Array<{ code: string; name: string }> {
  if (countryList) return countryList;
  const names = new Intl.DisplayNames(['en'], { type: 'region' });
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const found: Array<{ code: string; name: string }> = [];
  for (const first of letters)
    for (const second of letters) {
      const code = first + second;
      if (NOT_COUNTRIES.has(code) || Intl.getCanonicalLocales(`und-${code}`)[0] !== `und-${code}`) continue;
      const name = names.of(code);
      if (name && name !== code) found.push({ code, name });
    }
  countryList = found.sort((a, b) => a.name.localeCompare(b.name));
  return countryList;
}

/**
 * The buyer's billing country, asked only of a store that charges tax: the cart's tax line is
 * worked out for it (`shop.cart.setBilling`, then the cart priced again) and the checkout sends
 * it. Until the buyer chooses, the service's guess from the request (`taxCountry`) is shown.
 */
function billingCountry(cart: Cart): HTMLElement {
  const chosen = shop.cart.billing().country ?? cart.taxCountry ?? '';
  const select = h(
    'select',
    { id: 'billing-country', name: 'billing-country', autocomplete: 'country' },
    h('option', { value: '' }, 'Choose your country'),
  );
  for (const { code, name } of countries())
    select.append(h('option', { value: code, selected: code === chosen }, name));
  select.addEventListener('change', () => {
    keepBillingCountry(select.value || undefined);
    void refresh();
  });
  return h(
    'div',
    { class: 'field' },
    h('label', { for: 'billing-country' }, 'Billing country'),
    select,
    h('p', { class: 'hint' }, 'VAT is charged at the rate of the country you are billed in.'),
  );
}

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
    discountRow.querySelector('dd')!.textContent = `−${money(discount, cart.currency)}`;
    const tax = cartTaxLine(cart, discount);
    total.textContent = tax ? tax.total : money(Math.max(0, cart.subtotal - discount), cart.currency);
    if (tax && taxRow) {
      taxRow.querySelector('dt')!.textContent = tax.label;
      taxRow.querySelector('dd')!.textContent = tax.amount;
    }
    result.textContent = coupon ? `${coupon.code} takes ${money(discount, cart.currency)} off.` : '';
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

/**
 * Opens the order with this site's store page as the checkout's way back (its header links there).
 * svc takes it only from one of the store's allowed origins (the dashboard's Settings); from any
 * other site the order opens without it, and the checkout links to the store's hosted page.
 */
function checkout(): ReturnType<typeof shop.cart.checkout> {
  const returnUrl = new URL('./index.html', location.href).href;
  return shop.cart.checkout({ returnUrl }).catch((failure: unknown) => {
    if (failure instanceof SvcApiError && failure.issues.some((issue) => issue.path === 'returnUrl'))
      return shop.cart.checkout();
    throw failure;
  });
}

function checkoutButton(): HTMLElement {
  const alert = h('p', { class: 'form-error', role: 'alert', tabindex: '-1' });
  alert.hidden = true;
  const button = h('button', { type: 'button', class: 'primary' }, 'Checkout');
  button.addEventListener('click', () => {
    button.disabled = true;
    alert.hidden = true;
    // Once the order holds the lines, the cart starts again empty.
    checkout()
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
  const content: Node[] = [...new Set(notices)].filter(Boolean).map((text) => h('p', { class: 'notice' }, text));
  if (cart.lines.length === 0) {
    status.textContent = 'Your cart is empty.';
    content.push(h('p', {}, h('a', { href: './' }, 'See the products')));
  } else {
    status.textContent = '';
    const rows = cart.lines.map((line, index) => {
      const slug = slugs.get(line.productId);
      const href = slug ? productHref({ slug }) : `./product.html?id=${encodeURIComponent(line.productId)}`;
      return h(
        'tr',
        {},
        h(
          'th',
          { scope: 'row' },
          h('a', { href }, line.name),
          // A recurring line's plans: choosing one prices the cart again.
          line.plans.length > 0
            ? planChoice(line.plans, cart.currency, {
                name: `plan-${index}`,
                legend: `Plan of ${line.name}`,
                chosen: line.planId,
                onChoose: (planId) => {
                  shop.cart.setPlan(line.productId, planId);
                  void refresh();
                },
              })
            : null,
        ),
        h('td', {}, quantityInput(line), removeButton(line)),
        h('td', { class: 'amount' }, money(line.lineTotal, cart.currency)),
      );
    });
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
    const included = cart.taxBehavior === 'inclusive';
    const taxRow =
      cart.taxBehavior === 'off'
        ? null
        : h('div', { class: included ? 'tax included' : 'tax' }, h('dt', {}), h('dd', {}));
    const totals = h(
      'dl',
      { class: 'totals' },
      h('div', {}, h('dt', {}, 'Subtotal'), h('dd', {}, money(cart.subtotal, cart.currency))),
      discountRow,
      included ? null : taxRow,
      h('div', { class: 'total' }, h('dt', {}, 'Total'), total),
      included ? taxRow : null,
    );
    content.push(
      h(
        'div',
        { class: 'card' },
        table,
        cart.taxBehavior === 'off' ? null : billingCountry(cart),
        couponForm(cart, total, discountRow, taxRow),
        totals,
        checkoutButton(),
      ),
    );
  }
  root.replaceChildren(status, ...content);
}

const EMPTY: Cart = {
  storeId: '',
  currency: 'USD',
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
  if (shop.cart.lines().length === 0) {
    shop.cart.removeCoupon();
    render(EMPTY);
    return;
  }
  status.textContent = 'Loading your cart…';
  try {
    // The cart procedure (GET /api/v1/cart) prices it as the store will sell it, and the cart
    // keeps it so: removed lines leave, clamped quantities stay clamped.
    const [loaded] = await Promise.all([shop.cart.load(), storeShown]);
    const cart = loaded ?? EMPTY;
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
    // A billing country the service does not take (a browser naming a region svc has no rates
    // for): priced again for the request's own country, so the buyer can choose another.
    if (
      error instanceof SvcApiError &&
      error.issues.some((issue) => issue.path === 'country') &&
      shop.cart.billing().country
    ) {
      keepBillingCountry(undefined);
      return refresh();
    }
    status.textContent = errorText(error);
  }
}

if (configured()) void refresh();
