/**
 * cart.html, the cart: the buyer's cart (`shop.cart`, kept in localStorage) priced by the service
 * (`shop.cart.load()`, the procedure behind GET /api/v1/cart), quantities and `Remove`, a coupon
 * field (`shop.cart.applyCoupon`), and `Checkout`, which opens the order (`shop.cart.checkout()`)
 * and goes to the hosted checkout page it answers, where the buyer pays. The cart's logic is the
 * SDK's; this page is its rendering.
 */
import { configured, errorText, h, money, planChoice, productHref, shop, showStore } from './shop.js';
import { SvcApiError, type Cart } from '@svc/sdk/theme';

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

function couponForm(cart: Cart, total: HTMLElement, discountRow: HTMLElement): HTMLFormElement {
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
    total.textContent = money(Math.max(0, cart.subtotal - discount), cart.currency);
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
    const totals = h(
      'dl',
      { class: 'totals' },
      h('div', {}, h('dt', {}, 'Subtotal'), h('dd', {}, money(cart.subtotal, cart.currency))),
      discountRow,
      h('div', { class: 'total' }, h('dt', {}, 'Total'), total),
    );
    content.push(h('div', { class: 'card' }, table, couponForm(cart, total, discountRow), totals, checkoutButton()));
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
    status.textContent = errorText(error);
  }
}

if (configured()) void refresh();
