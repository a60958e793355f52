/**
 * The hosted storefront's HTML: the store page, a product page, the cart page and the page of a
 * store that is not available. Pure functions of what the catalog services answer; every text
 * escaped, prices formatted here with Intl in the store's currency, descriptions rendered from
 * Markdown (lib/markdown.ts), no inline script or style (the store's accent colour is the one
 * exception, allowed by its hash in the page's CSP: brand.ts).
 */
import type { TDeliveryMethod, TProductImage, TPublicProduct, TStorePublic } from '@svc/schemas';
import { escapeHtml } from '../lib/html.js';
import { markdownText } from '../lib/markdown.js';
import { amountToMinor, currencyExponent, formatMoney } from '../lib/money.js';
import { planLabel, planPriceText, trialText, type PlanTerms } from '../modules/catalog/plan-text.js';
import { brandStyle, storeHeader } from './brand.js';

/** The store as the pages show it (the public store, and its look once it has one). */
export type StorefrontStore = TStorePublic & {
  description?: string;
  accentColor?: string | null;
  logoUrl?: string | null;
  /**
   * The page shows the store's test products (`?mode=test`, docs/architecture.md, Test mode): a `Test mode` banner,
   * no indexing, and every link and form keeps the mode.
   */
  testMode?: boolean;
  /** On a test-mode cart page: the preview token its module sends with its API calls (access/test-mode.ts). */
  previewToken?: string;
};

export interface StorefrontDocument {
  /** Only the page's own part: the store's name follows it. */
  title: string;
  description: string;
  /** The page's address below the service's public URL (`/s/acme`). */
  path: string;
  ogType: 'website' | 'product';
  /** Server-rendered content of <main> (already escaped). */
  body: string;
  /** The cart module, on the cart page only: the store and product pages need no script. */
  script?: boolean;
  /** JSON-LD for the page (a product's Product + Offer). */
  jsonLd?: unknown;
  /** The page's picture for sharing (a path below the public URL); the store's logo otherwise. */
  image?: string;
}

export interface RenderedPage {
  html: string;
  /** The CSP source of the page's one inline style (the accent colour), if it has one. */
  styleHash?: string;
}

const DELIVERY_LABELS: Record<TDeliveryMethod, string> = {
  licenseKeys: 'A license key, shown as soon as you have paid',
  downloadFiles: 'Files to download, as soon as you have paid',
  manualDelivery: 'Delivered by the seller after payment',
  deliveryInstructions: 'Instructions from the seller with your order',
};

const money = (amount: number, currency: string): string => formatMoney(amountToMinor(amount, currency), currency);

type ShownPlan = TPublicProduct['plans'][number];

/** A shown plan as the plan texts read it: its price in minor units. */
const termsOf = (plan: ShownPlan, currency: string): PlanTerms => ({
  interval: plan.interval,
  intervalCount: plan.intervalCount,
  priceMinor: amountToMinor(plan.price, currency),
  trialDays: plan.trialDays,
});

/** A plan's price and period: `$9.00 / month`, `$90.00 / year`, `$25.00 every 3 months`. */
export const planPrice = (plan: ShownPlan, currency: string): string =>
  planPriceText(termsOf(plan, currency), currency);

/** A plan's trial, `7-day free trial`, or '' without one. */
export const planTrial = (plan: ShownPlan): string => trialText(plan);

/** The price a product is shown at: a one-time product's, or a recurring one's first plan with its period. */
export const price = (product: Pick<TPublicProduct, 'price' | 'currency'> & { plans?: ShownPlan[] }): string => {
  const first = product.plans?.[0];
  return first ? planPrice(first, product.currency) : money(product.price, product.currency);
};

/** schema.org's UN/CEFACT unit codes of a plan's interval. */
const UNIT_CODES = { day: 'DAY', week: 'WEE', month: 'MON', year: 'ANN' } as const;

/**
 * A recurring product's plans as a radio group of the add-to-cart form (its `planId` field, the
 * first plan chosen): each labelled by its price and period, with the saving of a yearly plan, its
 * trial as the description. The product's `plans` are its active ones only: an archived plan is
 * never offered.
 */
function planChoice(product: TPublicProduct): string {
  const terms = product.plans.map((plan) => termsOf(plan, product.currency));
  const choices = product.plans.map((plan, i) => {
    const id = `plan-${escapeHtml(plan.id)}`;
    const trial = trialText(plan);
    return `<div class="method">
<input type="radio" name="planId" id="${id}" value="${escapeHtml(plan.id)}"${trial ? ` aria-describedby="${id}-trial"` : ''}${i === 0 ? ' checked' : ''}>
<label for="${id}">${escapeHtml(planLabel(terms[i]!, terms, product.currency))}</label>${
      trial ? `\n<p class="hint" id="${id}-trial">${escapeHtml(trial)}</p>` : ''
    }
</div>`;
  });
  return `<fieldset class="methods plans">
<legend>Plan</legend>
${choices.join('\n')}
</fieldset>\n`;
}

/** A recurring product's plans as a list, where no form offers them (a sold-out product); '' for a one-time one. */
function planList(product: TPublicProduct): string {
  if (product.plans.length === 0) return '';
  const terms = product.plans.map((plan) => termsOf(plan, product.currency));
  const items = product.plans.map((plan, i) => {
    const trial = trialText(plan);
    return `<li>${escapeHtml(planLabel(terms[i]!, terms, product.currency))}${trial ? `, ${escapeHtml(trial)}` : ''}</li>`;
  });
  return `<ul class="plans" aria-label="Billing">${items.join('')}</ul>\n`;
}

/**
 * The product's offers for its JSON-LD: one Offer per plan of a recurring product, its price per
 * billing period as a UnitPriceSpecification (the period as `referenceQuantity`: 1 MON, 3 MON, 1
 * ANN; the trial as a free first component lasting `billingDuration` days), or the one Offer of a
 * one-time product.
 */
function offers(product: TPublicProduct, base: Record<string, unknown>): unknown {
  const amount = (value: number) => value.toFixed(currencyExponent(product.currency));
  if (product.plans.length === 0) return { '@type': 'Offer', price: amount(product.price), ...base };
  const list = product.plans.map((plan) => {
    const period = {
      '@type': 'UnitPriceSpecification',
      price: amount(plan.price),
      priceCurrency: product.currency,
      referenceQuantity: {
        '@type': 'QuantitativeValue',
        value: plan.intervalCount,
        unitCode: UNIT_CODES[plan.interval],
      },
    };
    const trial = {
      '@type': 'UnitPriceSpecification',
      price: amount(0),
      priceCurrency: product.currency,
      billingDuration: { '@type': 'QuantitativeValue', value: plan.trialDays, unitCode: 'DAY' },
    };
    return {
      '@type': 'Offer',
      name: planPrice(plan, product.currency),
      price: amount(plan.price),
      priceSpecification: plan.trialDays > 0 ? [trial, period] : period,
      ...base,
    };
  });
  return list.length === 1 ? list[0] : list;
}

/** A license-key product without enough keys for its smallest order. */
export const soldOut = (product: Pick<TPublicProduct, 'stock' | 'minQuantity'>): boolean =>
  product.stock !== null && product.stock < product.minQuantity;

const storePath = (store: Pick<TStorePublic, 'subdomain'>) => `/s/${encodeURIComponent(store.subdomain)}`;
/** A product's address: by its slug (its id answers too). */
export const productPath = (store: Pick<TStorePublic, 'subdomain'>, product: Pick<TPublicProduct, 'slug'>) =>
  `${storePath(store)}/products/${encodeURIComponent(product.slug)}`;
const cartPath = (store: Pick<TStorePublic, 'subdomain'>) => `${storePath(store)}/cart`;

/** A path of the store as a link of this page: with `mode=test` on a test-mode page. */
export const withMode = (store: Pick<StorefrontStore, 'testMode'>, path: string): string =>
  store.testMode ? `${path}${path.includes('?') ? '&' : '?'}mode=test` : path;

/** A meta description: the text's first 160 characters, on one line. */
function summary(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= 160 ? line : `${line.slice(0, 157).trimEnd()}…`;
}

/** Plain text as paragraphs (a blank line starts one, a line break stays one). */
function paragraphs(text: string): string {
  return text
    .split(/\n\s*\n/)
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => `<p>${escapeHtml(part).replace(/\n/g, '<br>')}</p>`)
    .join('\n');
}

/** JSON inside <script>: nothing in it can end the element or open a comment. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export function renderDocument(publicUrl: string, store: StorefrontStore, doc: StorefrontDocument): RenderedPage {
  const title = doc.title === store.name ? store.name : `${doc.title} · ${store.name}`;
  const url = `${publicUrl}${withMode(store, doc.path)}`;
  const accent = brandStyle(store.accentColor);
  const picture = doc.image ?? store.logoUrl;
  const ogImage = picture ? `${publicUrl}${picture}` : undefined;
  const meta = [
    `<meta name="description" content="${escapeHtml(doc.description)}">`,
    `<link rel="canonical" href="${escapeHtml(url)}">`,
    `<meta property="og:type" content="${doc.ogType}">`,
    `<meta property="og:title" content="${escapeHtml(title)}">`,
    `<meta property="og:description" content="${escapeHtml(doc.description)}">`,
    `<meta property="og:url" content="${escapeHtml(url)}">`,
    `<meta property="og:site_name" content="${escapeHtml(store.name)}">`,
    ...(ogImage ? [`<meta property="og:image" content="${escapeHtml(ogImage)}">`] : []),
    // Test products are no store's offer: kept out of search engines.
    ...(store.testMode ? ['<meta name="robots" content="noindex">'] : []),
  ];
  const head = [
    ...meta,
    '<link rel="stylesheet" href="/assets/app.css">',
    '<link rel="stylesheet" href="/assets/storefront.css">',
    ...(accent ? [`<style>${accent.css}</style>`] : []),
    ...(doc.script ? ['<script type="module" src="/assets/storefront/cart.js"></script>'] : []),
    ...(doc.jsonLd ? [`<script type="application/ld+json">${scriptJson(doc.jsonLd)}</script>`] : []),
  ];
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
${head.join('\n')}
</head>
<body class="storefront">
${
  store.testMode
    ? `<aside class="test-banner" aria-label="Test mode"><p><strong>Test mode</strong>: these are the store's test products. Orders placed here are test orders: no money moves.</p></aside>
`
    : ''
}${storeHeader(store, withMode(store, storePath(store)), `<a class="cart-link" href="${withMode(store, cartPath(store))}">Cart</a>`)}
<main id="main">
${doc.body}
</main>
</body>
</html>
`;
  return accent ? { html, styleHash: accent.hash } : { html };
}

function addToCartForm(store: StorefrontStore, product: TPublicProduct, withQuantity: boolean): string {
  const quantity = withQuantity
    ? `<div class="field quantity"><label for="quantity">Quantity</label>
<input id="quantity" name="quantity" type="number" inputmode="numeric" min="${product.minQuantity}"${
        product.maxQuantity !== null ? ` max="${product.maxQuantity}"` : ''
      } value="${product.minQuantity}" required></div>\n`
    : '';
  const label = withQuantity ? '' : `<span class="visually-hidden">: ${escapeHtml(product.name)}</span>`;
  // A GET form drops its action's query: the mode travels as a field of its own.
  return `<form class="add-to-cart" method="get" action="${cartPath(store)}">
<input type="hidden" name="add" value="${escapeHtml(product.id)}">
${store.testMode ? '<input type="hidden" name="mode" value="test">\n' : ''}${withQuantity && product.plans.length > 0 ? planChoice(product) : ''}${quantity}<button type="submit" class="primary">Add to cart${label}</button>
</form>`;
}

/** Cards in the grid's first row at its widest (64rem, 14rem columns): their images load at once. */
export const FIRST_ROW = 4;

/**
 * A product image: the WebP renditions in srcset, the widest one's size (the browser keeps the
 * space before it loads), and lazy loading unless it is in view when the page opens.
 */
export function imageTag(image: TProductImage, alt: string, sizes: string, lazy: boolean, className: string): string {
  const srcset = image.variants.map((v) => `${escapeHtml(v.url)} ${v.width}w`).join(', ');
  const first = image.variants[0]!;
  return `<img class="${className}" src="${escapeHtml(first.url)}" srcset="${srcset}" sizes="${sizes}" width="${image.width}" height="${image.height}" alt="${escapeHtml(alt)}"${
    lazy ? ' loading="lazy"' : ''
  } decoding="async">`;
}

/**
 * Where a product without images shows its picture: its initial on the accent's soft shade, the
 * same size as an image, so a grid or a product page has no hole (decorative: the name says it).
 */
function placeholder(product: Pick<TPublicProduct, 'name'>, className: string): string {
  const initial = Array.from(product.name.trim())[0]?.toUpperCase() ?? '';
  return `<div class="${className} placeholder" aria-hidden="true"><span>${escapeHtml(initial)}</span></div>`;
}

function productCard(store: StorefrontStore, product: TPublicProduct, index: number): string {
  const image = product.images[0];
  const picture = image
    ? imageTag(
        image,
        product.name,
        '(min-width: 64rem) 15rem, (min-width: 32rem) 50vw, 100vw',
        index >= FIRST_ROW,
        'card-image',
      )
    : placeholder(product, 'card-image');
  // The title's link covers the card (CSS), so the picture opens the product too; the button stays its own.
  return `<li class="product-card">
${picture}
<h2><a href="${withMode(store, productPath(store, product))}">${escapeHtml(product.name)}</a></h2>
<p class="price">${escapeHtml(price(product))}</p>
${soldOut(product) ? '<p class="sold-out">Sold out</p>' : addToCartForm(store, product, false)}
</li>`;
}

/** The address of a page of the store page: the first is the store's own. */
const storePagePath = (store: Pick<TStorePublic, 'subdomain'>, page: number) =>
  page === 1 ? storePath(store) : `${storePath(store)}?page=${page}`;

/** Previous and Next between the store page's pages (plain links: no script). */
function pager(store: StorefrontStore, page: number, pages: number): string {
  if (pages <= 1) return '';
  const previous =
    page > 1 ? `<a rel="prev" href="${withMode(store, storePagePath(store, page - 1))}">Previous</a>` : '';
  const next = page < pages ? `<a rel="next" href="${withMode(store, storePagePath(store, page + 1))}">Next</a>` : '';
  return `\n<nav class="pager" aria-label="Pages">${previous}<span>Page ${page} of ${pages}</span>${next}</nav>`;
}

export function storePage(
  publicUrl: string,
  store: StorefrontStore,
  products: TPublicProduct[],
  paging: { page: number; pages: number } = { page: 1, pages: 1 },
): RenderedPage {
  const { page, pages } = paging;
  const intro =
    store.description && page === 1 ? `<div class="store-description">${paragraphs(store.description)}</div>\n` : '';
  const grid =
    products.length === 0
      ? '<p>This store has nothing for sale yet.</p>'
      : `<ul class="product-grid">\n${products.map((p, i) => productCard(store, p, i)).join('\n')}\n</ul>`;
  const heading = page === 1 ? escapeHtml(store.name) : `${escapeHtml(store.name)}: page ${page}`;
  return renderDocument(publicUrl, store, {
    title: page === 1 ? store.name : `Page ${page}`,
    description: summary(
      page === 1
        ? store.description || `${store.name}: products for sale.`
        : `${store.name}: products for sale, page ${page} of ${pages}.`,
    ),
    path: storePagePath(store, page),
    ogType: 'website',
    body: `<h1>${heading}</h1>\n${intro}${grid}${pager(store, page, pages)}`,
  });
}

/** A page of the store page past its last one. */
export function missingPage(publicUrl: string, store: StorefrontStore, path: string): RenderedPage {
  return renderDocument(publicUrl, store, {
    title: 'Page not found',
    description: `This page of ${store.name} has no products.`,
    path,
    ogType: 'website',
    body: `<h1>Page not found</h1>
<p>This page has no products. <a href="${withMode(store, storePath(store))}">See the first page of ${escapeHtml(store.name)}</a>.</p>`,
  });
}

export function productPage(publicUrl: string, store: StorefrontStore, product: TPublicProduct): RenderedPage {
  const unavailable = soldOut(product);
  const path = productPath(store, product);
  const url = `${publicUrl}${withMode(store, path)}`;
  const jsonLd = {
    '@context': 'https://schema.org',
    '@type': 'Product',
    name: product.name,
    ...(product.description ? { description: markdownText(product.description) } : {}),
    url,
    ...(product.images.length > 0 ? { image: product.images.map((i) => `${publicUrl}${i.url}`) } : {}),
    offers: offers(product, {
      priceCurrency: product.currency,
      availability: unavailable ? 'https://schema.org/SoldOut' : 'https://schema.org/InStock',
      url,
      seller: { '@type': 'Organization', name: store.name },
    }),
  };
  const delivery = product.deliveryMethods.map((method) => `<li>${escapeHtml(DELIVERY_LABELS[method])}</li>`);
  const [main, ...more] = product.images;
  // Images | buy box from 48rem (storefront.css); one column on a phone: pictures, buy box, description.
  const gallery = `<div class="product-images">
${main ? imageTag(main, product.name, '(min-width: 64rem) 34rem, (min-width: 48rem) 55vw, 100vw', false, 'main-image') : placeholder(product, 'main-image')}${
    more.length > 0
      ? `\n<ul class="more-images">${more
          .map((image) => `<li>${imageTag(image, product.name, '8rem', true, 'more-image')}</li>`)
          .join('')}</ul>`
      : ''
  }
</div>`;
  const { descriptionHtml } = product;
  const body = `<p class="back"><a href="${withMode(store, storePath(store))}">All products of ${escapeHtml(store.name)}</a></p>
<article class="product">
${gallery}
<div class="buy-box">
<h1>${escapeHtml(product.name)}</h1>
<p class="price">${escapeHtml(price(product))}</p>
${unavailable ? planList(product) : ''}<h2>Delivery</h2>
<ul class="delivery">${delivery.join('')}</ul>
${unavailable ? '<p class="sold-out">Sold out</p>' : addToCartForm(store, product, true)}
</div>
${
  descriptionHtml
    ? `<section class="description" aria-labelledby="description-heading">
<h2 id="description-heading" class="visually-hidden">Description</h2>
${descriptionHtml}</section>\n`
    : ''
}</article>`;
  return renderDocument(publicUrl, store, {
    title: product.name,
    description: summary(
      (product.description && markdownText(product.description)) ||
        `${product.name}, ${price(product)}, at ${store.name}.`,
    ),
    path,
    ogType: 'product',
    body,
    jsonLd,
    ...(main ? { image: main.url } : {}),
  });
}

export function cartPage(publicUrl: string, store: StorefrontStore): RenderedPage {
  const body = `<h1>Your cart</h1>
<div id="cart" data-store-id="${escapeHtml(store.id)}" data-subdomain="${escapeHtml(store.subdomain)}" data-currency="${escapeHtml(store.currency)}"${store.testMode ? ` data-mode="test" data-preview="${escapeHtml(store.previewToken ?? '')}"` : ''}>
<p class="status" role="status">Loading your cart…</p>
<noscript><p>The cart needs JavaScript. <a href="${withMode(store, storePath(store))}">Back to the store</a></p></noscript>
</div>`;
  return renderDocument(publicUrl, store, {
    title: 'Your cart',
    description: `Your cart at ${store.name}.`,
    path: cartPath(store),
    ogType: 'website',
    body,
    script: true,
  });
}

/** A banned or unknown store: no store to name, so a page of its own. */
export function unavailablePage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Store not available</title>
<meta name="description" content="This store is not available.">
<meta name="robots" content="noindex">
<link rel="stylesheet" href="/assets/app.css">
</head>
<body>
<main id="main">
<h1>Store not available</h1>
<p>This store is not available. Check the address, or ask the seller for theirs.</p>
</main>
</body>
</html>
`;
}

/** A product the store does not show (unknown, draft, archived). */
export function missingProductPage(publicUrl: string, store: StorefrontStore, path: string): RenderedPage {
  return renderDocument(publicUrl, store, {
    title: 'Product not found',
    description: `This product is not for sale at ${store.name}.`,
    path,
    ogType: 'website',
    body: `<h1>Product not found</h1>
<p>This product is not for sale. <a href="${withMode(store, storePath(store))}">See all products of ${escapeHtml(store.name)}</a>.</p>`,
  });
}
