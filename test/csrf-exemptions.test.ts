/**
 * CSRF is each route's declared policy, on both transports, and nothing else: no URL prefix
 * decides it. Session-guarded probe mutations are mounted under the paths the design once named as
 * exempt prefixes and under guarded ones, some declaring the exemption and some not, and are
 * called over real HTTP with a real session. The product's own table is checked too: the routes
 * under the documented exempt prefixes read no seller session on unsafe calls (so there is
 * nothing to exempt), and every unsafe call a seller session authenticates requires the token,
 * logout included.
 */
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAIN_ROUTES } from '../apps/server/src/http/plain-routes.js';
import { identityRouter } from '../apps/server/src/api/routers/identity.router.js';
import { appRouter } from '../apps/server/src/api/app-router.js';
import { router, sessionProcedure } from '../apps/server/src/trpc/procedures.js';
import { routeTable } from '../apps/server/src/api/route-table.js';
import { startInProcess, type InProcessApp } from './support/in-process.js';
import { registerSeller, type Seller } from './support/seller.js';

const probe = (path: `/${string}`, csrf: 'required' | 'exempt') =>
  sessionProcedure
    .meta({ openapi: { method: 'POST', path }, csrf, errors: [] })
    .input(z.strictObject({}))
    .output(z.object({ ok: z.boolean() }))
    .mutation(() => ({ ok: true }));

const probeRouter = router({
  auth: identityRouter,
  exempt: router({
    payments: probe('/payments/probe', 'exempt'),
    embed: probe('/embed/probe', 'exempt'),
    checkout: probe('/checkout/probe', 'exempt'),
    v1: probe('/v1/probe', 'exempt'),
    dashboard: probe('/dashboard/exempt-probe', 'exempt'),
  }),
  guarded: router({
    dashboard: probe('/dashboard/probe', 'required'),
    customer: probe('/customer/probe', 'required'),
    v1: probe('/v1/guarded-probe', 'required'),
  }),
});

let app: InProcessApp;
let seller: Seller;
beforeAll(async () => {
  app = await startInProcess({ router: probeRouter });
  seller = await registerSeller(app.url);
});
afterAll(() => app?.close());

const call = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${app.url}${path}`, {
    method: 'POST',
    headers: { cookie: seller.cookie, 'content-type': 'application/json', ...headers },
    body: '{}',
  });

/** The documented exemptions of docs/decisions.md: auth bootstrap, payments, embed, checkout, /api/v1. */
const DOCUMENTED_EXEMPT_PREFIXES = ['/api/auth/', '/api/payments/', '/api/embed/', '/api/checkout/', '/api/v1/'];

describe('CSRF by route policy', () => {
  it.each([
    '/api/payments/probe',
    '/api/embed/probe',
    '/api/checkout/probe',
    '/api/v1/probe',
    '/api/dashboard/exempt-probe',
  ])('%s, declared exempt, takes a cookie session without a token', async (path) => {
    expect((await call(path)).status).toBe(200);
  });

  it.each(['/api/dashboard/probe', '/api/customer/probe', '/api/v1/guarded-probe'])(
    '%s needs the token (wherever its path is)',
    async (path) => {
      const without = await call(path);
      expect(without.status).toBe(403);
      expect((await without.json()).code).toBe('csrf_failed');
      expect((await call(path, { 'x-csrf-token': seller.csrfToken })).status).toBe(200);
    },
  );

  it('is the same policy on /trpc as on REST', async () => {
    const trpc = (name: string, headers: Record<string, string> = {}) =>
      fetch(`${app.url}/trpc/${name}`, {
        method: 'POST',
        headers: { cookie: seller.cookie, 'content-type': 'application/json', ...headers },
        body: '{}',
      });
    const guarded = await trpc('guarded.v1');
    expect(guarded.status).toBe(403);
    expect((await guarded.json()).error.data.code).toBe('csrf_failed');
    expect((await trpc('guarded.v1', { 'x-csrf-token': seller.csrfToken })).status).toBe(200);
    expect((await trpc('exempt.v1')).status).toBe(200);
  });

  it('signs out only with the token, on both transports', async () => {
    const other = await registerSeller(app.url);
    const rest = await fetch(`${app.url}/api/auth/logout`, { method: 'POST', headers: { cookie: other.cookie } });
    expect(rest.status).toBe(403);
    expect((await rest.json()).code).toBe('csrf_failed');
    const rpc = await fetch(`${app.url}/trpc/auth.logout`, {
      method: 'POST',
      headers: { cookie: other.cookie, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(rpc.status).toBe(403);
    // Still signed in after both refusals; the token signs out.
    expect((await fetch(`${app.url}/api/auth/session`, { headers: { cookie: other.cookie } })).status).toBe(200);
    expect(
      (
        await fetch(`${app.url}/api/auth/logout`, {
          method: 'POST',
          headers: { cookie: other.cookie, 'x-csrf-token': other.csrfToken },
        })
      ).status,
    ).toBe(204);
    expect((await fetch(`${app.url}/api/auth/session`, { headers: { cookie: other.cookie } })).status).toBe(401);
  });
});

describe("the product's route table", () => {
  const table = routeTable(appRouter, PLAIN_ROUTES);
  const unsafe = (method: string) => method !== 'GET';

  it('reads no seller session on unsafe calls under the documented exempt prefixes, but for logout, which needs the token', () => {
    const under = table.entries.filter(
      (entry) => unsafe(entry.method) && DOCUMENTED_EXEMPT_PREFIXES.some((prefix) => entry.path.startsWith(prefix)),
    );
    expect(under.length).toBeGreaterThan(10);
    for (const entry of under) {
      if (entry.path === '/api/auth/logout') expect(entry.policy.csrf, entry.name).toBe('required');
      else expect(entry.policy.csrf, entry.name).toBe('none');
    }
  });

  it('exempts no product route: every unsafe call a seller session can authenticate requires the token', () => {
    const sessionReaders = table.entries.filter(
      (entry) =>
        unsafe(entry.method) &&
        (entry.policy.auth.kind === 'session' ||
          (entry.policy.auth.kind === 'buyer' && entry.policy.auth.staffSession)),
    );
    expect(sessionReaders.length).toBeGreaterThan(30);
    for (const entry of sessionReaders) expect(entry.policy.csrf, entry.name).toBe('required');
  });
});
