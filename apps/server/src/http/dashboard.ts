/**
 * The seller dashboard (apps/dashboard, a single-page app built by Vite) served from this origin
 * at /dashboard/ (docs/architecture.md, The faces): no second process. The build's files are read once at start and
 * kept in memory with the gzip and brotli encodings the build wrote beside them (`.gz`, `.br`;
 * about 1.5 MB in all), so a start compresses nothing:
 * - hashed files under /dashboard/assets/ are immutable for a year;
 * - every other path under /dashboard/ is a client route: it answers index.html, `no-cache` with
 *   an ETag, so deep links and reloads land on the right screen and a new release is seen at once;
 * - the page's CSP allows only this origin (scripts, styles, fetches), and no framing.
 * Without a build (a server-only checkout), /dashboard/ answers 404 rather than failing to start.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePolicy } from '../trpc/policy.js';
import { ifNoneMatchHas, sendNotModified } from './etag.js';
import { plainRoute } from './plain-route.js';

/** apps/dashboard/dist/, from apps/server/src/http or apps/server/dist/http alike. */
export const DASHBOARD_DIST = fileURLToPath(new URL('../../../dashboard/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.ico': 'image/x-icon',
};

/** The page's policy: this origin only. Styles set by script through the CSSOM are not inline styles. */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  type: string;
  etag: string;
  identity: Buffer;
  gzip?: Buffer;
  br?: Buffer;
}

/** The file read whole, with its encodings when the build wrote them (text over 1 KB). */
function readAsset(dir: string, file: string): Asset {
  const body = readFileSync(join(dir, file));
  const encoded = (suffix: string) => {
    const path = join(dir, `${file}${suffix}`);
    return existsSync(path) ? readFileSync(path) : undefined;
  };
  return {
    type: TYPES[extname(file)] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    identity: body,
    gzip: encoded('.gz'),
    br: encoded('.br'),
  };
}

interface Build {
  index: Asset;
  assets: Map<string, Asset>;
}

/** The built app, or undefined when apps/dashboard has not been built. */
export function loadDashboard(dir = DASHBOARD_DIST): Build | undefined {
  let index: Asset;
  try {
    index = readAsset(dir, 'index.html');
  } catch {
    return undefined;
  }
  const assets = new Map<string, Asset>();
  let names: string[] = [];
  try {
    names = readdirSync(join(dir, 'assets'));
  } catch {
    // An app without assets is only its page.
  }
  // A file's encodings are not files of their own: they are sent for it.
  for (const name of names) if (!/\.(gz|br)$/.test(name)) assets.set(name, readAsset(join(dir, 'assets'), name));
  return { index, assets };
}

const build = loadDashboard();

/** The best encoding the client accepts (brotli, then gzip), by the header's listed codings. */
function encodingFor(request: FastifyRequest, file: Asset): 'br' | 'gzip' | undefined {
  const accepted = String(request.headers['accept-encoding'] ?? '');
  const listed = (coding: string) =>
    new RegExp(`(^|,)\\s*${coding}\\s*(;\\s*q=(?!0(\\.0*)?\\s*(,|$))[\\d.]+)?\\s*(,|$)`).test(accepted);
  if (file.br && listed('br')) return 'br';
  if (file.gzip && listed('gzip')) return 'gzip';
  return undefined;
}

function send(request: FastifyRequest, reply: FastifyReply, file: Asset, cacheControl: string): FastifyReply {
  reply.header('Cache-Control', cacheControl).header('ETag', file.etag);
  if (file.gzip) reply.header('Vary', 'Accept-Encoding');
  if (ifNoneMatchHas(request.headers['if-none-match'], file.etag)) return sendNotModified(reply);
  const encoding = encodingFor(request, file);
  if (encoding) reply.header('Content-Encoding', encoding);
  return reply.type(file.type).send(encoding ? file[encoding] : file.identity);
}

/** The app's page (index.html) under its CSP, revalidated on every load. */
function sendPage(request: FastifyRequest, reply: FastifyReply): FastifyReply | void {
  if (!build) return reply.callNotFound();
  reply.header('Content-Security-Policy', DASHBOARD_CSP);
  return send(request, reply, build.index, 'no-cache');
}

const POLICY: RoutePolicy = {
  auth: { kind: 'public', audience: 'seller' },
  csrf: 'none',
  cors: 'none',
  errors: ['not_found'],
};

export const DASHBOARD_ROUTES = [
  plainRoute({
    name: 'dashboard.root',
    method: 'GET',
    path: '/dashboard',
    body: 'none',
    policy: POLICY,
    openapi: false,
    async handler(_ctx, request, reply) {
      // The router ignores a trailing slash, so /dashboard/ lands here too: that is the app itself.
      const [pathname = '', query] = request.url.split('?', 2) as [string, string?];
      if (pathname.endsWith('/')) return sendPage(request, reply);
      return reply.redirect(query === undefined ? '/dashboard/' : `/dashboard/?${query}`, 308);
    },
  }),
  plainRoute({
    name: 'dashboard.app',
    method: 'GET',
    path: '/dashboard/*',
    body: 'none',
    policy: POLICY,
    openapi: false,
    async handler(ctx, request, reply) {
      if (!build) return reply.callNotFound();
      const rest = ctx.params['*'] ?? '';
      // (The router drops a trailing slash, so /dashboard/assets/ arrives as `assets`.)
      if (rest === 'assets' || rest.startsWith('assets/')) {
        // A hashed file: its name changes with its bytes. An unknown one is a 404, not the page.
        const file = build.assets.get(rest.slice('assets/'.length));
        if (!file) return reply.callNotFound();
        return send(request, reply, file, 'public, max-age=31536000, immutable');
      }
      // A client route: the app's page, which reads the path itself.
      return sendPage(request, reply);
    },
  }),
];
