/**
 * The buyer's pages, served by the service from its own origin: checkout, order status and
 * delivery, the customer area, the embed checkout a theme frames, and `/embed.js` for themes.
 *
 * Each page is a small HTML shell (no inline script; data in `data-` attributes) plus one ES
 * module from `apps/server/client/` (compiled by tsc into dist/public/js) and one stylesheet. The
 * modules speak to the JSON API with same-origin fetch. Every page carries a strict
 * Content-Security-Policy; only the embed pages may be framed. A page that knows its store (from
 * the order in its address, or the customer area's subdomain) carries the store's brand: its logo
 * and name linking back to the store, or to the theme the buyer came from (`?return=`, checked
 * against the store's origins), and its accent colour (brand.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { PublicError } from '../lib/errors.js';
import { escapeHtml } from '../lib/html.js';
import { looksLikeId } from '../lib/ids.js';
import { OrderSchema } from '../modules/orders/orders.entities.js';
import { storeReturnUrl } from '../modules/stores/origins.js';
import { StoreSchema, type Store } from '../modules/stores/stores.entities.js';
import { logoUrlOf } from '../modules/stores/store-views.js';
import type { RoutePolicy } from '../trpc/policy.js';
import { brandStyle, cspWithStyle, storeHeader, storefrontPath, type Brand } from './brand.js';
import { loadAsset, loadStylesheet } from './client-assets.js';
import { plainRoute, type PlainContext, type PlainRoute } from './plain-route.js';

/** apps/server/, from src/http or dist/http alike. */
const BASE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
];

/** Pages nobody frames. */
export const PAGE_CSP = [...BASE_CSP, "frame-ancestors 'none'"].join('; ');
/** Pages a theme frames through /embed.js (any site may embed the checkout, as /api/embed/checkout is open to any origin). */
export const EMBED_PAGE_CSP = [...BASE_CSP, 'frame-ancestors *'].join('; ');

export interface PageShell {
  title: string;
  /** The client module under /assets/js/, or none for a page that needs no script. */
  script?: string;
  /** data-* attributes of <main> (names without the prefix). */
  data?: Record<string, string>;
  /** Server-rendered content of <main> (already escaped). */
  body: string;
  embed?: boolean;
  /** The store the page belongs to, and where its name links (none in a frame: the theme is right there). */
  brand?: PageBrand | undefined;
}

export interface PageBrand {
  store: Brand;
  href: string | undefined;
}

export function renderPage(shell: PageShell): string {
  const data = Object.entries(shell.data ?? {})
    .map(([name, value]) => ` data-${name}="${escapeHtml(value)}"`)
    .join('');
  const style = brandStyle(shell.brand?.store.accentColor);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(shell.title)}</title>
<link rel="stylesheet" href="/assets/app.css">
${style ? `<style>${style.css}</style>\n` : ''}${shell.script ? `<script type="module" src="/assets/js/${shell.script}"></script>\n` : ''}</head>
<body${shell.embed ? ' class="embed"' : ''}>
${shell.brand ? `${storeHeader(shell.brand.store, shell.brand.href)}\n` : ''}<main id="main"${data}>
${shell.body}
</main>
</body>
</html>
`;
}

export function sendPage(reply: FastifyReply, shell: PageShell, status = 200): FastifyReply {
  return (
    reply
      .code(status)
      .header(
        'Content-Security-Policy',
        cspWithStyle(shell.embed ? EMBED_PAGE_CSP : PAGE_CSP, brandStyle(shell.brand?.store.accentColor)),
      )
      // The addresses carry checkout tokens: nothing keeps a copy.
      .header('Cache-Control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(renderPage(shell))
  );
}

const loading = (what: string) => `<p class="status" role="status">${escapeHtml(what)}</p>
<noscript><p>This page needs JavaScript.</p></noscript>`;

function notFound(reply: FastifyReply, what: string, embed = false): FastifyReply {
  return sendPage(reply, { title: 'Not found', body: `<h1>Not found</h1>\n<p>${escapeHtml(what)}</p>`, embed }, 404);
}

const isEmbed = (query: unknown) => (query as { embed?: unknown }).embed === '1';

/**
 * The brand of a page of this store: its name links to the theme's address in `?return=` when that
 * is on one of the store's origins, else to its hosted storefront; a framed page links nowhere.
 */
export function pageBrand(config: Config, store: Store, query: unknown, embed: boolean): PageBrand {
  const brand: Brand = {
    name: store.name,
    subdomain: store.subdomain,
    logoUrl: logoUrlOf(store),
    accentColor: store.accentColor ?? null,
  };
  if (embed) return { store: brand, href: undefined };
  const back = storeReturnUrl(config, store, (query as { return?: unknown }).return);
  return { store: brand, href: back ?? storefrontPath(brand) };
}

/** The brand of an order's pages, from the order id in the address (none for an unknown order: its script says so). */
async function orderBrand(ctx: PlainContext, request: FastifyRequest, orderId: string): Promise<PageBrand | undefined> {
  const order = await ctx.em.findOne(OrderSchema, { id: orderId }, { fields: ['store'] });
  const store = order && (await ctx.em.findOne(StoreSchema, { id: order.store.id, banned: false }));
  return store ? pageBrand(ctx.deps.config, store, request.query, isEmbed(request.query)) : undefined;
}

const CLIENT_MODULES = ['checkout.js', 'billing.js', 'delivery.js', 'account.js', 'embed-checkout.js', 'common.js'];

// Read once, at start: a missing client build is a 404, not a crash.
const css = loadStylesheet('client/app.css');
const modules = new Map(CLIENT_MODULES.map((name) => [name, loadAsset(`dist/public/js/${name}`)]));
const embedScript = loadAsset('dist/public/embed.js');
const favicon = loadAsset('client/favicon.ico');

/** A page's policy: anyone, no cookie read by the route itself (the page's script speaks to the API). */
const PAGE_POLICY: RoutePolicy = {
  auth: { kind: 'public', audience: 'storefront' },
  csrf: 'none',
  cors: 'none',
  errors: ['not_found'],
};

/** A page that failed answers as a page. */
const pageError =
  (embed: (request: FastifyRequest) => boolean) => (reply: FastifyReply, error: PublicError, request: FastifyRequest) =>
    sendPage(
      reply,
      {
        title: error.status === 404 ? 'Not found' : 'Error',
        body: `<h1>${error.status === 404 ? 'Not found' : 'Something went wrong'}</h1>\n<p>${escapeHtml(error.message)}</p>`,
        embed: embed(request),
      },
      error.status,
    );

const page = (route: Omit<PlainRoute, 'body' | 'policy' | 'openapi'>) =>
  plainRoute({
    body: 'none',
    policy: PAGE_POLICY,
    openapi: false,
    renderError: pageError((request) => isEmbed(request.query)),
    ...route,
  });

export const PAGE_ROUTES: PlainRoute[] = [
  page({
    name: 'assets.css',
    method: 'GET',
    path: '/assets/app.css',
    async handler(_ctx, request, reply) {
      if (!css) return reply.callNotFound();
      return reply.header('Cache-Control', 'public, max-age=300').type('text/css; charset=utf-8').send(css);
    },
  }),
  // Browsers ask every origin for it; without it each page's first visit logs a 404 in the console.
  page({
    name: 'assets.favicon',
    method: 'GET',
    path: '/favicon.ico',
    async handler(_ctx, _request, reply) {
      if (!favicon) return reply.callNotFound();
      return reply.header('Cache-Control', 'public, max-age=86400').type('image/x-icon').send(favicon);
    },
  }),
  page({
    name: 'assets.js',
    method: 'GET',
    path: '/assets/js/{file}',
    async handler(ctx, _request, reply) {
      const body = modules.get(ctx.params.file!);
      if (!body) return reply.callNotFound();
      return reply.header('Cache-Control', 'public, max-age=300').type('text/javascript; charset=utf-8').send(body);
    },
  }),
  // Loaded by themes from their own origin: a classic script any page may include.
  plainRoute({
    name: 'assets.embed',
    method: 'GET',
    path: '/embed.js',
    body: 'none',
    policy: { ...PAGE_POLICY, cors: 'open' },
    openapi: false,
    async handler(_ctx, _request, reply) {
      if (!embedScript) return reply.callNotFound();
      return reply
        .header('Cross-Origin-Resource-Policy', 'cross-origin')
        .header('Cache-Control', 'public, max-age=300')
        .type('text/javascript; charset=utf-8')
        .send(embedScript);
    },
  }),
  page({
    name: 'pages.checkout',
    method: 'GET',
    path: '/checkout/{orderId}',
    async handler(ctx, request, reply) {
      const embed = isEmbed(request.query);
      if (!looksLikeId(ctx.params.orderId!)) return notFound(reply, 'There is no such order.', embed);
      return sendPage(reply, {
        brand: await orderBrand(ctx, request, ctx.params.orderId!),
        title: 'Checkout',
        script: 'checkout.js',
        data: { page: 'checkout', 'order-id': ctx.params.orderId! },
        body: `<h1>Checkout</h1>\n${loading('Loading your order…')}`,
        embed,
      });
    },
  }),
  page({
    name: 'pages.order',
    method: 'GET',
    path: '/orders/{orderId}',
    async handler(ctx, request, reply) {
      const embed = isEmbed(request.query);
      if (!looksLikeId(ctx.params.orderId!)) return notFound(reply, 'There is no such order.', embed);
      return sendPage(reply, {
        brand: await orderBrand(ctx, request, ctx.params.orderId!),
        title: 'Your order',
        script: 'delivery.js',
        data: { page: 'delivery', 'order-id': ctx.params.orderId! },
        body: `<h1>Your order</h1>\n${loading('Loading your order…')}`,
        embed,
      });
    },
  }),
  page({
    name: 'pages.account',
    method: 'GET',
    path: '/account/{subdomain}',
    async handler(ctx, request, reply) {
      const subdomain = ctx.params.subdomain!.toLowerCase();
      const store = /^[a-z0-9-]{1,63}$/.test(subdomain)
        ? await ctx.em.findOne(StoreSchema, { subdomain, banned: false })
        : null;
      if (!store) return notFound(reply, 'There is no such store.');
      // `?mode=test`: the test-mode area (the buyer's test orders and subscriptions).
      const mode = (request.query as { mode?: unknown }).mode === 'test' ? 'test' : 'live';
      return sendPage(reply, {
        brand: pageBrand(ctx.deps.config, store, request.query, false),
        title: `Your orders at ${store.name}`,
        script: 'account.js',
        data: { page: 'account', 'store-id': store.id, 'store-name': store.name, mode },
        body: `<h1>Your orders at ${escapeHtml(store.name)}</h1>\n${loading('Loading…')}`,
      });
    },
  }),
  // What /embed.js opens in its overlay: creates the order, then goes on to its checkout page.
  page({
    name: 'pages.embedCheckout',
    method: 'GET',
    path: '/embed/checkout',
    async handler(_ctx, _request, reply) {
      return sendPage(reply, {
        title: 'Checkout',
        script: 'embed-checkout.js',
        data: { page: 'embed-checkout' },
        body: `<h1>Checkout</h1>\n${loading('Preparing your checkout…')}`,
        embed: true,
      });
    },
  }),
];
