/**
 * The hosted storefront (docs/architecture.md, The faces): `/s/{subdomain}`, `/s/{subdomain}/products/{productId}`
 * and `/s/{subdomain}/cart`, server-rendered from the catalog services the public catalog routes
 * use, plus their stylesheet and the cart's one ES module (client/storefront/, bundled with the
 * SDK's theme client by scripts/build-storefront.mjs).
 *
 * Every page answers with an ETag and `Cache-Control: no-cache`, and 304 to a matching
 * If-None-Match. The ETag is the catalog's `storefrontVersion` (one statement: the store's and
 * its products' updated_at and which products are sold out) joined to the fingerprint of this
 * code and its assets, so a 304 costs that one statement and a new release changes every ETag.
 *
 * `?mode=test` (docs/architecture.md, Test mode) shows the store's test products under a `Test mode` banner, to the
 * seller's side only (a preview token or a member's session, access/test-mode.ts; anyone else
 * gets the live page): the page's context is a test context, so the version, the page and the
 * product read that mode only, and the ETag names the mode (a test change never changes a live
 * ETag, nor the other way round). Test pages are `private`: they depend on the browser's cookies.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TStorePublic } from '@svc/schemas';
import type { PublicError } from '../lib/errors.js';
import { findSellingStore } from '../modules/stores/selling-store.js';
import { publicProduct, storefrontPage, storefrontVersion } from '../modules/catalog/catalog.service.js';
import { storeLogo } from '../modules/catalog/logo.service.js';
import { isMemberSession, pageTestModeAccess } from '../modules/access/test-mode.js';
import { checkPreviewToken, setPreviewCookie } from '../modules/stores/preview-token.js';
import { toPublicStore } from '../modules/stores/store-views.js';
import { markStorePreviewed } from '../modules/stores/stores.service.js';
import type { RoutePolicy } from '../trpc/policy.js';
import { ifNoneMatchHas, sendNotModified } from './etag.js';
import { PAGE_CSP } from './pages.js';
import { loadAsset, loadStylesheet } from './client-assets.js';
import { plainRoute, type PlainContext, type PlainRoute } from './plain-route.js';
import {
  cartPage,
  missingPage,
  missingProductPage,
  productPage,
  storePage,
  unavailablePage,
  type RenderedPage,
  type StorefrontStore,
} from './storefront-html.js';

/** apps/server/, from src/http or dist/http alike. */
// Read once, at start: a missing build is a 404, not a crash.
const css = loadStylesheet('client/storefront.css');
const cartModule = loadAsset('dist/public/storefront/cart.js');

/**
 * What the pages' bytes depend on besides the data: the templates (this code) and the assets.
 * Part of every ETag, so a browser never keeps a page of the previous release.
 */
export const RELEASE = (() => {
  const hash = createHash('sha256');
  // The templates, as .js once built (.ts under vitest): the pages, the store's header and accent, the Markdown.
  const extension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  const code = ['http/storefront', 'http/storefront-html', 'http/pages', 'http/brand', 'lib/markdown'].map((name) =>
    loadAsset(`${extension === 'ts' ? 'src' : 'dist'}/${name}.${extension}`),
  );
  for (const part of [...code, css, cartModule, loadAsset('client/app.css')]) if (part) hash.update(part);
  return hash.digest('base64url').slice(0, 10);
})();

const PAGE_POLICY: RoutePolicy = {
  auth: { kind: 'public', audience: 'storefront' },
  csrf: 'none',
  cors: 'none',
  errors: ['not_found', 'store_banned'],
};

/** The store page's `?page=`: a whole number from 1 (at most 5 digits); anything else is the first page. */
function pageNumber(value: string | undefined): number {
  return value && /^[1-9][0-9]{0,4}$/.test(value) ? Number(value) : 1;
}

/** How a page shows the store: live, or its test products with the token the cart module sends. */
type PageMode = { testMode: false } | { testMode: true; previewToken: string };
const LIVE: PageMode = { testMode: false };

/**
 * The page's mode: `?mode=test` shows the store's test products to the seller's side (the
 * svc_preview cookie's token, or a member's session: pageTestModeAccess), the live store to anyone
 * else; anything but `test` is live. Set on the context before any read, so every finder the page
 * calls takes it. Undefined when the answer is sent already: a page opened with `?preview=<token>`
 * (the dashboard's View store link) keeps a valid token in the svc_preview cookie, for the store's
 * pages only, and answers 303 to its own address without it (so the token leaves the address bar
 * and the history).
 */
async function readMode(
  ctx: PlainContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<PageMode | undefined> {
  ctx.livemode = true;
  const preview = ctx.query.preview;
  if (preview === undefined && ctx.query.mode !== 'test') {
    await noteMemberVisit(ctx);
    return LIVE;
  }
  const store = await findSellingStore(ctx, ctx.params.subdomain!, 'subdomain');
  if (preview !== undefined) {
    const check = checkPreviewToken(ctx, preview, store.id);
    if (check.ok) {
      setPreviewCookie(ctx, store.subdomain, preview, check.expiresAt);
      // The dashboard's View store link: the seller's side opened the storefront.
      if (!store.firstPreviewedAt) await markStorePreviewed(ctx, store.id);
    }
    const address = new URL(request.url, 'http://page');
    address.searchParams.delete('preview');
    await reply.redirect(`${address.pathname}${address.search}`, 303);
    return undefined;
  }
  const access = await pageTestModeAccess(ctx, store.id);
  if (!access.allowed) return LIVE;
  if (!store.firstPreviewedAt) await markStorePreviewed(ctx, store.id);
  ctx.livemode = false;
  return { testMode: true, previewToken: access.token };
}

/**
 * A live page opened in a browser signed in to the dashboard as a member of the store is the
 * seller looking at their storefront: noted the first time, for the Home's setup checklist
 * (docs/decisions.md, "Onboarding checklist"). Only a request with a session cookie pays for the
 * look-ups; a buyer's carries none, and a theme's API calls never come here.
 */
async function noteMemberVisit(ctx: PlainContext): Promise<void> {
  if (ctx.caller.credentials.sessionToken === undefined) return;
  const store = await findSellingStore(ctx, ctx.params.subdomain!, 'subdomain');
  if (!store.firstPreviewedAt && (await isMemberSession(ctx, store.id))) await markStorePreviewed(ctx, store.id);
}

/** The store as a page of this mode shows it. */
const shownStore = (store: TStorePublic, mode: PageMode): StorefrontStore =>
  mode.testMode ? { ...store, ...mode } : store;

/** A page of the store's test products depends on the browser's cookies: no shared cache keeps it. */
const cacheControl = (ctx: PlainContext) => (ctx.livemode ? 'no-cache' : 'private, no-cache');

/** Same rule as pages.ts's account page: anything else is no store's subdomain. */
const SUBDOMAIN = /^[a-z0-9-]{1,63}$/;

function sendUnavailable(reply: FastifyReply): FastifyReply {
  return reply
    .code(404)
    .header('Content-Security-Policy', PAGE_CSP)
    .header('Cache-Control', 'no-cache')
    .type('text/html; charset=utf-8')
    .send(unavailablePage());
}

function sendRendered(
  ctx: PlainContext,
  reply: FastifyReply,
  page: RenderedPage,
  etag: string | undefined,
  status = 200,
): FastifyReply {
  const csp = page.styleHash ? PAGE_CSP.replace("style-src 'self'", `style-src 'self' ${page.styleHash}`) : PAGE_CSP;
  if (etag) reply.header('ETag', etag);
  return reply
    .code(status)
    .header('Content-Security-Policy', csp)
    .header('Cache-Control', cacheControl(ctx))
    .type('text/html; charset=utf-8')
    .send(page.html);
}

/**
 * The page's ETag when the store shows it, after answering 304 when the browser holds it; undefined
 * when the store (or the product) is not shown, or when the 304 is sent (`reply.sent`).
 */
async function revalidate(
  ctx: PlainContext,
  request: FastifyRequest,
  reply: FastifyReply,
  page: string,
  mode: PageMode,
  productId?: string,
): Promise<string | undefined> {
  const version = await storefrontVersion(ctx, { subdomain: ctx.params.subdomain!, productId });
  if (!version) return undefined;
  // A test page names its mode, and the cart page the token its module sends (a new one is a new page).
  const test = mode.testMode
    ? `.test.${createHash('sha256').update(mode.previewToken).digest('base64url').slice(0, 8)}`
    : '';
  const etag = `"${version}.${RELEASE}.${page}${test}"`;
  if (ifNoneMatchHas(request.headers['if-none-match'], etag)) {
    await sendNotModified(reply.header('ETag', etag).header('Cache-Control', cacheControl(ctx)));
  }
  return etag;
}

/** A banned store found after the version (a race with a ban) answers as an unknown one. */
function renderError(reply: FastifyReply, error: PublicError): FastifyReply {
  if (error.code === 'not_found' || error.code === 'store_banned') return sendUnavailable(reply);
  return reply
    .code(error.status)
    .header('Content-Security-Policy', PAGE_CSP)
    .header('Cache-Control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Error</title></head><body><h1>Something went wrong</h1></body></html>',
    );
}

const page = (route: Omit<PlainRoute, 'body' | 'policy' | 'openapi' | 'method'>) =>
  plainRoute({ method: 'GET', body: 'none', policy: PAGE_POLICY, openapi: false, renderError, ...route });

const asset = (name: string, path: string, body: Buffer | undefined, type: string) =>
  page({
    name,
    path,
    async handler(_ctx, _request, reply) {
      if (!body) return reply.callNotFound();
      return reply.header('Cache-Control', 'public, max-age=300').type(type).send(body);
    },
  });

export const STOREFRONT_ROUTES: PlainRoute[] = [
  asset('storefront.css', '/assets/storefront.css', css, 'text/css; charset=utf-8'),
  asset('storefront.cartModule', '/assets/storefront/cart.js', cartModule, 'text/javascript; charset=utf-8'),
  // A new logo gets a new file id, so one address always holds the same bytes.
  page({
    name: 'storefront.logo',
    path: '/s/{subdomain}/logo/{fileId}',
    renderError: (reply) => reply.code(404).header('Cache-Control', 'no-store').send(),
    async handler(ctx, _request, reply) {
      const logo = await storeLogo(ctx, { subdomain: ctx.params.subdomain!, fileId: ctx.params.fileId! });
      return (
        reply
          .header('Content-Type', logo.contentType)
          .header('Content-Length', String(logo.size))
          .header('Cache-Control', 'public, max-age=31536000, immutable')
          // Public, as product images are: a theme on its own origin shows it.
          .header('Cross-Origin-Resource-Policy', 'cross-origin')
          .send(ctx.deps.storage.read(logo.storageKey))
      );
    },
  }),
  page({
    name: 'storefront.store',
    path: '/s/{subdomain}',
    async handler(ctx, request, reply) {
      if (!SUBDOMAIN.test(ctx.params.subdomain!.toLowerCase())) return sendUnavailable(reply);
      const mode = await readMode(ctx, request, reply);
      if (!mode) return reply;
      // `?page=N` (from 1): each page its own address, canonical and ETag; anything else is page 1.
      const page = pageNumber(ctx.query.page);
      const etag = await revalidate(ctx, request, reply, page === 1 ? 'store' : `store-p${page}`, mode);
      if (!etag) return sendUnavailable(reply);
      if (reply.sent) return reply;
      const shown = await storefrontPage(ctx, { subdomain: ctx.params.subdomain!, page });
      const store = shownStore(shown.store, mode);
      if (shown.products.length === 0 && page > 1) {
        const path = `/s/${store.subdomain}?page=${page}`;
        return sendRendered(ctx, reply, missingPage(ctx.deps.config.publicUrl, store, path), undefined, 404);
      }
      return sendRendered(ctx, reply, storePage(ctx.deps.config.publicUrl, store, shown.products, shown), etag);
    },
  }),
  page({
    name: 'storefront.product',
    path: '/s/{subdomain}/products/{productId}',
    async handler(ctx, request, reply) {
      if (!SUBDOMAIN.test(ctx.params.subdomain!.toLowerCase())) return sendUnavailable(reply);
      const mode = await readMode(ctx, request, reply);
      if (!mode) return reply;
      const productId = ctx.params.productId!;
      const etag = await revalidate(ctx, request, reply, 'product', mode, productId);
      if (reply.sent) return reply;
      const store = await findSellingStore(ctx, ctx.params.subdomain!, 'subdomain');
      const view = shownStore(toPublicStore(store), mode);
      if (!etag) {
        const path = `/s/${store.subdomain}/products/${encodeURIComponent(productId)}`;
        return sendRendered(ctx, reply, missingProductPage(ctx.deps.config.publicUrl, view, path), undefined, 404);
      }
      const product = await publicProduct(ctx, store, { productId });
      return sendRendered(ctx, reply, productPage(ctx.deps.config.publicUrl, view, product), etag);
    },
  }),
  page({
    name: 'storefront.cart',
    path: '/s/{subdomain}/cart',
    async handler(ctx, request, reply) {
      if (!SUBDOMAIN.test(ctx.params.subdomain!.toLowerCase())) return sendUnavailable(reply);
      const mode = await readMode(ctx, request, reply);
      if (!mode) return reply;
      const etag = await revalidate(ctx, request, reply, 'cart', mode);
      if (!etag) return sendUnavailable(reply);
      if (reply.sent) return reply;
      const store = await findSellingStore(ctx, ctx.params.subdomain!, 'subdomain');
      return sendRendered(
        ctx,
        reply,
        cartPage(ctx.deps.config.publicUrl, shownStore(toPublicStore(store), mode)),
        etag,
      );
    },
  }),
];
