/**
 * The buyer's pages, served by the service from its own origin: checkout, order status and
 * delivery, the customer area, the embed checkout a theme frames, and `/embed.js` for themes.
 *
 * Each page is a small HTML shell (no inline script or style; data in `data-` attributes)
 * plus one ES module from `apps/server/client/` (compiled by tsc into dist/public/js) and one
 * stylesheet. The modules speak to the JSON API with same-origin fetch. Every page carries a
 * strict Content-Security-Policy; only the embed pages may be framed.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppDeps } from '../deps.js';
import { escapeHtml } from '../lib/html.js';
import { looksLikeId } from '../lib/ids.js';
import { StoreSchema } from '../modules/stores/stores.entities.js';

/** apps/server/, from src/http or dist/http alike. */
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

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
}

export function renderPage(shell: PageShell): string {
  const data = Object.entries(shell.data ?? {})
    .map(([name, value]) => ` data-${name}="${escapeHtml(value)}"`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(shell.title)}</title>
<link rel="stylesheet" href="/assets/app.css">
${shell.script ? `<script type="module" src="/assets/js/${shell.script}"></script>\n` : ''}</head>
<body${shell.embed ? ' class="embed"' : ''}>
<main id="main"${data}>
${shell.body}
</main>
</body>
</html>
`;
}

export function sendPage(reply: FastifyReply, shell: PageShell, status = 200): FastifyReply {
  return reply
    .code(status)
    .header('Content-Security-Policy', shell.embed ? EMBED_PAGE_CSP : PAGE_CSP)
    // The addresses carry checkout tokens: nothing keeps a copy.
    .header('Cache-Control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(renderPage(shell));
}

const loading = (what: string) => `<p class="status" role="status">${escapeHtml(what)}</p>
<noscript><p>This page needs JavaScript.</p></noscript>`;

function notFound(reply: FastifyReply, what: string, embed = false): FastifyReply {
  return sendPage(reply, { title: 'Not found', body: `<h1>Not found</h1>\n<p>${escapeHtml(what)}</p>`, embed }, 404);
}

const isEmbed = (query: unknown) => (query as { embed?: unknown }).embed === '1';

/** Static assets: read once; a missing client build is a 404, not a crash. */
function loadAsset(relative: string): Buffer | undefined {
  try {
    return readFileSync(PACKAGE_ROOT + relative);
  } catch {
    return undefined;
  }
}

const CLIENT_MODULES = ['checkout.js', 'delivery.js', 'account.js', 'embed-checkout.js', 'common.js'];

export async function pagesPlugin(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;
  const css = loadAsset('client/app.css');
  const modules = new Map(CLIENT_MODULES.map((name) => [name, loadAsset(`dist/public/js/${name}`)]));
  const embedScript = loadAsset('dist/public/embed.js');

  app.get('/assets/app.css', async (_request, reply) => {
    if (!css) return reply.callNotFound();
    return reply.header('Cache-Control', 'public, max-age=300').type('text/css; charset=utf-8').send(css);
  });

  app.get<{ Params: { file: string } }>('/assets/js/:file', async (request, reply) => {
    const body = modules.get(request.params.file);
    if (!body) return reply.callNotFound();
    return reply.header('Cache-Control', 'public, max-age=300').type('text/javascript; charset=utf-8').send(body);
  });

  // Loaded by themes from their own origin: a classic script any page may include.
  app.get('/embed.js', async (_request, reply) => {
    if (!embedScript) return reply.callNotFound();
    return reply
      .header('Access-Control-Allow-Origin', '*')
      .header('Cross-Origin-Resource-Policy', 'cross-origin')
      .header('Cache-Control', 'public, max-age=300')
      .type('text/javascript; charset=utf-8')
      .send(embedScript);
  });

  app.get<{ Params: { orderId: string } }>('/checkout/:orderId', async (request, reply) => {
    const embed = isEmbed(request.query);
    if (!looksLikeId(request.params.orderId)) return notFound(reply, 'There is no such order.', embed);
    return sendPage(reply, {
      title: 'Checkout',
      script: 'checkout.js',
      data: { page: 'checkout', 'order-id': request.params.orderId },
      body: `<h1>Checkout</h1>\n${loading('Loading your order…')}`,
      embed,
    });
  });

  app.get<{ Params: { orderId: string } }>('/orders/:orderId', async (request, reply) => {
    const embed = isEmbed(request.query);
    if (!looksLikeId(request.params.orderId)) return notFound(reply, 'There is no such order.', embed);
    return sendPage(reply, {
      title: 'Your order',
      script: 'delivery.js',
      data: { page: 'delivery', 'order-id': request.params.orderId },
      body: `<h1>Your order</h1>\n${loading('Loading your order…')}`,
      embed,
    });
  });

  app.get<{ Params: { subdomain: string } }>('/account/:subdomain', async (request, reply) => {
    const subdomain = request.params.subdomain.toLowerCase();
    const store = /^[a-z0-9-]{1,63}$/.test(subdomain) ? await deps.orm.em.fork().findOne(StoreSchema, { subdomain, banned: false }) : null;
    if (!store) return notFound(reply, 'There is no such store.');
    return sendPage(reply, {
      title: `Your orders at ${store.name}`,
      script: 'account.js',
      data: { page: 'account', 'store-id': store.id, 'store-name': store.name },
      body: `<h1>Your orders at ${escapeHtml(store.name)}</h1>\n${loading('Loading…')}`,
    });
  });

  // What /embed.js opens in its overlay: creates the order, then goes on to its checkout page.
  app.get('/embed/checkout', async (_request, reply) =>
    sendPage(reply, {
      title: 'Checkout',
      script: 'embed-checkout.js',
      data: { page: 'embed-checkout' },
      body: `<h1>Checkout</h1>\n${loading('Preparing your checkout…')}`,
      embed: true,
    }),
  );
}
