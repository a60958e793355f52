/**
 * Black-box over HTTP: how `svc serve` serves the dashboard's build (docs/architecture.md, The faces). The page and
 * every client route answer index.html, revalidated (`no-cache`, ETag, 304) under a CSP of this
 * origin only; /dashboard goes to /dashboard/; each hashed file of the build's manifest is
 * immutable for a year, compressed when asked; an unknown asset is a 404; and the route table
 * declares the dashboard's routes like every plain route.
 */
import { readFileSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAIN_ROUTES } from '../apps/server/src/http/plain-routes.js';
import { appRouter } from '../apps/server/src/api/app-router.js';
import { routeTable } from '../apps/server/src/api/route-table.js';
import { REPO_ROOT, startServer } from './support/server.js';

const DIST = path.join(REPO_ROOT, 'apps/dashboard/dist');
const manifest = JSON.parse(readFileSync(path.join(DIST, '.vite/manifest.json'), 'utf8')) as Record<
  string,
  { file: string; css?: string[] }
>;
const index = readFileSync(path.join(DIST, 'index.html'));

let server: Awaited<ReturnType<typeof startServer>>;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

/** A GET whose body is returned as sent (Node's fetch would decode gzip and br itself). */
function rawGet(
  pathname: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(`${server.url}${pathname}`, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
      );
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

function get(pathname: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}${pathname}`, { headers, redirect: 'manual' });
}

/** The CSP as directive -> sources. */
function policy(header: string | null): Map<string, string[]> {
  expect(header, 'a Content-Security-Policy header').toBeTruthy();
  return new Map(
    header!
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...sources]) => [name!, sources]),
  );
}

/** Every file of the build's manifest (chunks and their CSS), as /dashboard/ paths. */
const builtFiles = [...new Set(Object.values(manifest).flatMap((chunk) => [chunk.file, ...(chunk.css ?? [])]))].map(
  (file) => `/dashboard/${file}`,
);

describe('the dashboard as svc serves it', () => {
  it('answers index.html at /dashboard/ and at every client route, no-cache with an ETag, under a CSP of this origin only', async () => {
    const etags = new Set<string>();
    for (const pathname of [
      '/dashboard/',
      '/dashboard/sign-in',
      '/dashboard/stores/x/orders?status=paid',
      '/dashboard/stores/st_123/orders/or_456',
      '/dashboard/no/such/screen',
    ]) {
      const response = await get(pathname);
      expect(response.status, pathname).toBe(200);
      expect(response.headers.get('content-type'), pathname).toBe('text/html; charset=utf-8');
      expect(response.headers.get('cache-control'), pathname).toBe('no-cache');
      expect(Buffer.from(await response.arrayBuffer()).equals(index), `${pathname} is the build's index.html`).toBe(
        true,
      );
      const etag = response.headers.get('etag');
      expect(etag, pathname).toMatch(/^"[^"]+"$/);
      etags.add(etag!);

      const csp = policy(response.headers.get('content-security-policy'));
      for (const directive of ['default-src', 'script-src', 'style-src', 'connect-src'])
        expect(csp.get(directive), `${pathname} ${directive}`).toEqual(["'self'"]);
      for (const [directive, sources] of csp) {
        // Only this origin, or nothing (images may also be data: URLs); no inline code, no eval, no other host.
        const allowed = directive === 'img-src' ? ["'self'", 'data:'] : ["'self'", "'none'"];
        for (const source of sources) expect(allowed, `${pathname} ${directive} ${source}`).toContain(source);
      }
      expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
      expect(csp.get('object-src')).toEqual(["'none'"]);

      // Revalidation: the same ETag is a 304 with no body.
      const again = await get(pathname, { 'if-none-match': etag! });
      expect(again.status, pathname).toBe(304);
      expect(await again.text()).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
      // The 304 carries no policy of its own: the browser keeps the page's (its 200's).
      expect(again.headers.get('content-security-policy')).toBeNull();
      // Another ETag gets the page.
      expect((await get(pathname, { 'if-none-match': '"stale"' })).status).toBe(200);
    }
    expect(etags.size, 'one page, one ETag').toBe(1);
  });

  it("links the dashboard from the service's root page", async () => {
    const root = await get('/', {});
    expect(root.status).toBe(200);
    expect(await root.text()).toContain('<a href="/dashboard/">Dashboard</a>');
  });

  it('sends /dashboard to /dashboard/', async () => {
    const response = await get('/dashboard');
    expect([301, 308]).toContain(response.status);
    expect(response.headers.get('location')).toBe('/dashboard/');
    // /dashboard/ itself is the page, not another redirect (the router ignores trailing slashes).
    expect((await get('/dashboard/')).status).toBe(200);
  });

  it('serves each hashed file of the manifest immutable for a year, its own bytes, compressed when asked', async () => {
    expect(builtFiles.length).toBeGreaterThan(3);
    expect(builtFiles.some((file) => file.endsWith('.css'))).toBe(true);
    for (const file of builtFiles) {
      expect(file, 'a hashed name').toMatch(/^\/dashboard\/assets\/[\w.-]+-[\w-]{8}\.(js|css)$/);
      const bytes = readFileSync(path.join(DIST, file.slice('/dashboard/'.length)));
      // Asked for no encoding: the file as built.
      const plain = await rawGet(file, {});
      expect(plain.status, file).toBe(200);
      expect(plain.headers['cache-control'], file).toBe('public, max-age=31536000, immutable');
      expect(plain.headers['content-type'], file).toBe(
        file.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8',
      );
      expect(plain.headers['content-encoding'], file).toBeUndefined();
      expect(plain.body.equals(bytes), `${file} is the build's bytes`).toBe(true);
      const etag = plain.headers.etag;
      expect(etag, file).toMatch(/^"[^"]+"$/);
      expect((await get(file, { 'if-none-match': etag! })).status, file).toBe(304);
      if (bytes.length <= 1024) continue; // too small to be worth compressing
      expect(plain.headers.vary, file).toBe('Accept-Encoding');

      for (const [coding, decode] of [
        ['gzip', gunzipSync],
        ['br', brotliDecompressSync],
      ] as const) {
        const encoded = await rawGet(file, { 'accept-encoding': coding });
        expect(encoded.status, `${file} ${coding}`).toBe(200);
        expect(encoded.headers['content-encoding'], `${file} ${coding}`).toBe(coding);
        expect(encoded.headers.vary, `${file} ${coding}`).toBe('Accept-Encoding');
        expect(encoded.headers['cache-control']).toBe('public, max-age=31536000, immutable');
        expect(encoded.body.length, `${file} ${coding} is smaller`).toBeLessThan(bytes.length);
        expect(decode(encoded.body).equals(bytes), `${file} ${coding} decodes to the file`).toBe(true);
      }
    }
  });

  it('answers 404 for an asset that is not in the build, never the page', async () => {
    // The encodings the build writes beside a file are sent for it, never as files of their own.
    const large = builtFiles.find(
      (file) => readFileSync(path.join(DIST, file.slice('/dashboard/'.length))).length > 1024,
    );
    expect(large, 'a built file over 1 KB').toBeDefined();
    for (const pathname of [
      `${large}.br`,
      `${large}.gz`,
      '/dashboard/assets/index-00000000.js',
      '/dashboard/assets/',
      '/dashboard/assets/nested/index-00000000.js',
      '/dashboard/assets',
    ]) {
      const response = await get(pathname);
      expect(response.status, pathname).toBe(404);
      expect(response.headers.get('cache-control') ?? '', pathname).not.toContain('immutable');
      expect(await response.text(), pathname).not.toContain('<div id="root">');
    }
  });

  it('declares the dashboard routes in the route table: public, no CSRF or CORS, not in the API document', () => {
    const table = routeTable(appRouter, PLAIN_ROUTES);
    const dashboard = table.entries.filter((entry) => entry.name.startsWith('dashboard.'));
    expect(dashboard.map((entry) => `${entry.name} ${entry.method} ${entry.path}`).sort()).toEqual([
      'dashboard.app GET /dashboard/*',
      'dashboard.root GET /dashboard',
    ]);
    for (const entry of dashboard) {
      expect(entry.source, entry.name).toBe('plain');
      expect(entry.documented, entry.name).toBe(false);
      expect(entry.policy.auth.kind, entry.name).toBe('public');
      expect(entry.policy.csrf, entry.name).toBe('none');
      expect(entry.policy.cors, entry.name).toBe('none');
    }
    expect(table.match('GET', '/dashboard/stores/x/orders')?.name).toBe('dashboard.app');
    expect(table.match('GET', '/dashboard/assets/index-abc.js')?.name).toBe('dashboard.app');
    expect(table.match('GET', '/dashboard')?.name).toBe('dashboard.root');
  });
});
