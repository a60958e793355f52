/**
 * What the three pages share: the theme client for the store (with the buyer's cart,
 * `shop.cart`, kept in localStorage), the store's look in the header, prices, and a small element
 * helper. The only API this theme calls is `@svc/sdk/theme`: change the pages freely, keep the calls.
 */
import {
  createThemeClient,
  isSvcError,
  planLabel,
  planPriceText,
  SvcApiError,
  trialText,
  type StorefrontPlan,
  type Storefront,
  type StorefrontProduct,
} from '@svc/sdk/theme';

export type { Storefront, StorefrontPlan, StorefrontProduct };
export type Store = Storefront['store'];

/** The service and the store, from .env (VITE_SVC_URL, VITE_STORE); baked in at build time. */
const baseUrl = (import.meta.env.VITE_SVC_URL ?? '').replace(/\/+$/, '');
export const subdomain = import.meta.env.VITE_STORE ?? '';

/** True when both settings are there; otherwise the page says what to set. */
export function configured(): boolean {
  if (baseUrl && subdomain) return true;
  const main = document.getElementById('main');
  main?.replaceChildren(
    h('h1', {}, 'This theme is not configured'),
    h('p', {}, 'Set VITE_SVC_URL and VITE_STORE in .env (see .env.example and the README), then build again.'),
  );
  return false;
}

/**
 * `VITE_SVC_MODE=test`: the store's test products (made with a test key or the dashboard's Test
 * mode), under a Test mode banner, while the theme is built and tried. Their orders are test
 * orders: the test gateway settles them and no money moves. Anything else: the live store.
 * Test products are the seller's: svc shows them only with `VITE_SVC_PREVIEW_TOKEN`, a preview
 * token of the store (an hour long; the README says where to get one). It opens nothing but the
 * store's test mode, so it may be baked into a test build; never put an API key here.
 */
export const mode: 'live' | 'test' = import.meta.env.VITE_SVC_MODE === 'test' ? 'test' : 'live';
const previewToken = mode === 'test' ? import.meta.env.VITE_SVC_PREVIEW_TOKEN || undefined : undefined;

/**
 * The theme client; `shop.cart` is the buyer's cart, product ids and quantities in localStorage
 * under `svc-cart:<subdomain>` (`svc-cart:<subdomain>:test` in test mode, so a test cart never
 * mixes with the live one). The service prices it (`shop.cart.load()`) every time the cart page
 * opens, so nothing stored is trusted for money.
 */
export const shop = createThemeClient({
  baseUrl: baseUrl || 'http://localhost',
  subdomain: subdomain || 'unset',
  mode,
  previewToken,
});

type Child = Node | string | null | false | undefined;

/** `h('a', { href: '/' }, 'Home')`: an element with attributes and children (text is never parsed as HTML). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value !== false && value !== undefined) element.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) if (child !== null && child !== false && child !== undefined) element.append(child);
  return element;
}

/** Plain text as paragraphs: a blank line starts one. */
export function paragraphs(text: string): HTMLParagraphElement[] {
  return text
    .split(/\n\s*\n/)
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => h('p', {}, part));
}

/** An amount in the store's currency, formatted by Intl in the page's language. */
export function money(amount: number, currency: string): string {
  return new Intl.NumberFormat(document.documentElement.lang || 'en', { style: 'currency', currency }).format(amount);
}

/** A license-key product without enough keys for its smallest order. */
export const soldOut = (product: Pick<StorefrontProduct, 'stock' | 'minQuantity'>): boolean =>
  product.stock !== null && product.stock < product.minQuantity;

/** A product's page in this theme: by its slug (`?id=` works too). */
export const productHref = (product: Pick<StorefrontProduct, 'slug'>): string =>
  `./product.html?slug=${encodeURIComponent(product.slug)}`;

/**
 * An address svc gave (a product image, the store's logo: paths such as `/images/...`) on svc's
 * origin: the theme is served from its own, where the bare path would name nothing.
 */
export function onService(url: string): string {
  return url.startsWith('/') ? `${baseUrl}${url}` : url;
}

/**
 * A product's first image, decorative (`alt=""`: the product's name is beside it): svc's WebP
 * renditions in `srcset` for the browser to pick by `sizes`, and the widest one's size, so the
 * space is kept before it loads. `lazy` where it may be out of view (the store page's cards),
 * `eager` where it is the page's picture. A product without images gets a blank box of the same
 * shape, so a grid of cards keeps its rows even.
 */
export function productImage(
  product: Pick<StorefrontProduct, 'images'>,
  { sizes, loading }: { sizes: string; loading: 'lazy' | 'eager' },
): HTMLElement {
  const image = product.images[0];
  if (!image) return h('div', { class: 'product-image placeholder', 'aria-hidden': 'true' });
  const narrowest = image.variants[0] ?? image;
  return h('img', {
    class: 'product-image',
    src: onService(narrowest.url),
    srcset:
      image.variants.length > 0
        ? image.variants.map((variant) => `${onService(variant.url)} ${variant.width}w`).join(', ')
        : undefined,
    sizes: image.variants.length > 0 ? sizes : undefined,
    width: String(image.width),
    height: String(image.height),
    alt: '',
    loading,
    decoding: 'async',
  });
}

/** The store's name, logo and accent colour in the header; the page's title. */
export function showStore(store: Store, pageTitle?: string): void {
  document.title = pageTitle ? `${pageTitle} · ${store.name}` : store.name;
  const name = document.querySelector<HTMLAnchorElement>('.store-name');
  if (name) {
    const logo = store.logoUrl
      ? h('img', { class: 'store-logo', src: onService(store.logoUrl), alt: '', width: '40', height: '40' })
      : null;
    name.replaceChildren(...[logo, h('span', {}, store.name)].filter((node): node is HTMLElement => node !== null));
  }
  if (mode === 'test' && !document.querySelector('.test-mode')) {
    document
      .querySelector('.store-bar')
      ?.after(
        h(
          'aside',
          { class: 'test-mode', 'aria-label': 'Test mode' },
          h('strong', {}, 'Test mode'),
          ": these are the store's test products. Orders are test orders; no money moves.",
        ),
      );
  }
  // Only a checked #rrggbb, as the hosted pages; it draws borders, never text.
  if (store.accentColor && /^#[0-9a-f]{6}$/i.test(store.accentColor))
    document.documentElement.style.setProperty('--accent', store.accentColor);
}

/** What to tell the buyer when a call fails: svc's message, or the network's. */
/** What a failed call says: a refused field's own reason (a plan no longer sold) before the answer's summary. */
export const errorText = (error: unknown): string =>
  error instanceof SvcApiError
    ? (error.issues[0]?.message ?? error.message)
    : isSvcError(error)
      ? error.message
      : 'The connection failed. Check your network and try again.';

/** The price a product is shown at: a one-time product's, or a recurring one's first plan with its period (`$9.00 / month`). */
export const priceText = (product: Pick<StorefrontProduct, 'price' | 'currency' | 'plans'>): string =>
  product.plans[0] ? planPriceText(product.plans[0], product.currency) : money(product.price, product.currency);

/**
 * A recurring product's plans as a radio group (`$9.00 / month`, `$90.00 / year · save 17 %`, the
 * trial as a plan's description), `chosen` checked; `onChoose` gets the plan chosen.
 */
export function planChoice(
  plans: readonly StorefrontPlan[],
  currency: string,
  options: { name: string; legend: string; chosen: string | null | undefined; onChoose?: (planId: string) => void },
): HTMLFieldSetElement {
  const choices = plans.map((plan, i) => {
    const id = `${options.name}-${plan.id}`;
    const trial = trialText(plan);
    const input = h('input', {
      type: 'radio',
      name: options.name,
      id,
      value: plan.id,
      checked: options.chosen ? plan.id === options.chosen : i === 0,
      'aria-describedby': trial ? `${id}-trial` : undefined,
    });
    input.addEventListener('change', () => {
      if (input.checked) options.onChoose?.(plan.id);
    });
    return h(
      'div',
      { class: 'plan' },
      input,
      h('label', { for: id }, planLabel(plan, plans, currency)),
      trial ? h('p', { class: 'hint', id: `${id}-trial` }, trial) : null,
    );
  });
  return h('fieldset', { class: 'plans' }, h('legend', {}, options.legend), ...choices);
}
