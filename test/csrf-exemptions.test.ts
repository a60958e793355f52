/**
 * The CSRF exemptions hold for every exempt prefix and nowhere else. No product route under
 * most of these prefixes takes a seller session yet, so session-guarded probe mutations are
 * mounted there and called over real HTTP with a real session.
 */
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityRouter } from '../apps/server/src/modules/identity/identity.router.js';
import { CSRF_EXEMPT_PREFIXES, sessionProcedure } from '../apps/server/src/trpc/guards.js';
import { router } from '../apps/server/src/trpc/procedures.js';
import { startInProcess, type InProcessApp } from './support/in-process.js';
import { registerSeller, type Seller } from './support/seller.js';

const probe = (path: `/${string}`) =>
  sessionProcedure
    .meta({ openapi: { method: 'POST', path, protect: false } })
    .input(z.strictObject({}))
    .output(z.object({ ok: z.boolean() }))
    .mutation(() => ({ ok: true }));

const probeRouter = router({
  auth: identityRouter,
  exempt: router({
    payments: probe('/payments/probe'),
    embed: probe('/embed/probe'),
    checkout: probe('/checkout/probe'),
    v1: probe('/v1/probe'),
  }),
  guarded: router({ dashboard: probe('/dashboard/probe'), customer: probe('/customer/probe') }),
});

let app: InProcessApp;
let seller: Seller;
beforeAll(async () => {
  app = await startInProcess({ router: probeRouter });
  seller = await registerSeller(app.url);
});
afterAll(() => app?.close());

const call = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${app.url}${path}`, { method: 'POST', headers: { cookie: seller.cookie, 'content-type': 'application/json', ...headers }, body: '{}' });

describe('CSRF exemptions', () => {
  it('names exactly the documented prefixes', () => {
    expect(CSRF_EXEMPT_PREFIXES).toEqual(['/api/auth/', '/api/payments/', '/api/embed/', '/api/checkout/', '/api/v1/']);
  });

  it.each(['/api/payments/probe', '/api/embed/probe', '/api/checkout/probe', '/api/v1/probe'])('%s takes a cookie session without a token', async (path) => {
    expect((await call(path)).status).toBe(200);
  });

  it.each(['/api/dashboard/probe', '/api/customer/probe'])('%s needs the token', async (path) => {
    const without = await call(path);
    expect(without.status).toBe(403);
    expect((await without.json()).code).toBe('csrf_failed');
    expect((await call(path, { 'x-csrf-token': seller.csrfToken })).status).toBe(200);
  });

  it('checks the token on /trpc whatever the procedure, since /trpc has no exempt prefix', async () => {
    const response = await fetch(`${app.url}/trpc/exempt.v1`, { method: 'POST', headers: { cookie: seller.cookie, 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(403);
  });
});
