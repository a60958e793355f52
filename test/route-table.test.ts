/**
 * The route table is whole: every procedure and plain route declares its auth surface, CSRF and
 * CORS policy and its error codes, and the table (which REST, /trpc CORS and CSRF, OpenAPI, the
 * metrics and the SDK generator read) refuses a declaration with a gap.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_STATUS } from '@svc/schemas';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { PLAIN_ROUTES } from '../apps/server/src/http/plain-routes.js';
import { appRouter } from '../apps/server/src/api/app-router.js';
import { t } from '../apps/server/src/trpc/init.js';
import { publicProcedure, router, storeResource } from '../apps/server/src/trpc/procedures.js';
import { impliedCodes, policyGaps, routeTable } from '../apps/server/src/api/route-table.js';
import type { RoutePolicy } from '../apps/server/src/trpc/policy.js';
import { REPO_ROOT } from './support/server.js';

describe('the route table', () => {
  const table = routeTable(appRouter, PLAIN_ROUTES);

  it('holds every procedure of the router, with a whole policy', () => {
    const procedures = Object.keys(appRouter._def.procedures);
    expect([...new Set(table.procedures.map((entry) => entry.name))].sort()).toEqual(procedures.sort());
    for (const entry of table.entries) {
      expect(policyGaps(entry.name, entry.policy, entry.method), entry.name).toEqual([]);
      expect(['public', 'session', 'apiKey', 'customer', 'buyer', 'signature', 'operator'], entry.name).toContain(
        entry.policy.auth.kind,
      );
      expect(['required', 'exempt', 'none'], entry.name).toContain(entry.policy.csrf);
      expect(['none', 'open', 'store-origins'], entry.name).toContain(entry.policy.cors);
      expect(Array.isArray(entry.policy.errors), entry.name).toBe(true);
      // Every route can fail inside: its statuses always include 500 and 503, each from a known code.
      expect(entry.errorStatuses, entry.name).toEqual(expect.arrayContaining([500, 503]));
      for (const code of entry.errorCodes) expect(Object.keys(ERROR_STATUS), entry.name).toContain(code);
    }
  });

  it('knows which REST operations read a JSON body, exactly as the OpenAPI document does', () => {
    const document = JSON.parse(readFileSync(path.join(REPO_ROOT, 'openapi/openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>>;
    };
    for (const entry of table.procedures) {
      const operation = document.paths[entry.path]?.[entry.method.toLowerCase()];
      expect(operation, entry.name).toBeDefined();
      expect(entry.jsonBody, entry.name).toBe(Boolean(operation?.requestBody?.content['application/json']));
    }
    expect(table.procedures.filter((entry) => entry.jsonBody).length).toBeGreaterThan(30);
  });

  it('documents the plain API routes, the dashboard payment proof among them', () => {
    const documented = table.entries
      .filter((entry) => entry.source === 'plain' && entry.documented)
      .map((entry) => `${entry.method} ${entry.path}`);
    expect(documented.sort()).toEqual(
      [
        'GET /api/dashboard/stores/{storeId}/orders/{orderId}/payment-proof',
        'GET /api/orders/{orderId}/files/{fileId}',
        'GET /api/merchant/v1/stores/{storeId}/orders/{orderId}/invoice',
        'GET /api/dashboard/stores/{storeId}/orders/{orderId}/invoice',
        'GET /api/orders/{orderId}/invoice',
        'GET /api/merchant/v1/stores/{storeId}/orders/{orderId}/credit-note',
        'GET /api/dashboard/stores/{storeId}/orders/{orderId}/credit-note',
        'GET /api/orders/{orderId}/credit-note',
        'GET /api/v1/licenses/jwks/{storeId}',
        'POST /api/dashboard/stores/{storeId}/products/{productId}/files',
        'POST /api/dashboard/stores/{storeId}/products/{productId}/images',
        'POST /api/merchant/v1/stores/{storeId}/products/{productId}/images',
        'POST /api/dashboard/stores/{storeId}/logo',
        'DELETE /api/dashboard/stores/{storeId}/logo',
        'POST /api/merchant/v1/stores/{storeId}/logo',
        'DELETE /api/merchant/v1/stores/{storeId}/logo',
        'POST /api/orders/{orderId}/payment-proof',
        'POST /api/payments/{gateway}/webhook',
      ].sort(),
    );
  });

  it('answers which route a request reaches, and the CORS policy of a /trpc call', () => {
    expect(table.match('GET', '/api/merchant/v1/stores/s1/orders/o1')?.name).toBe('orders.get');
    // One procedure for both audiences: each path its own route, bound to its credential.
    const dashboardUpdate = table.match('PATCH', '/api/dashboard/stores/s1/orders/o1');
    expect(dashboardUpdate?.name).toBe('orders.update');
    expect(dashboardUpdate?.credential).toBe('session');
    expect(table.match('PATCH', '/api/merchant/v1/stores/s1/orders/o1')?.credential).toBe('apiKey');
    expect(table.match('GET', '/api/dashboard/stores/s1/orders')?.name).toBe('orders.dashboardList');
    expect(table.match('GET', '/api/dashboard/stores/s1/orders/o1/payment-proof')?.name).toBe(
      'payments.dashboardProof',
    );
    expect(table.match('GET', '/api/merchant/v1/stores/s1')?.name).toBe('stores.merchantGet');
    expect(table.match('POST', '/api/merchant/v1/stores/s1/logo')?.name).toBe('stores.merchantUploadLogo');
    expect(table.match('GET', '/api/nowhere')).toBeUndefined();
    expect(table.trpcCors(['checkout.cart', 'catalog.storefront'])).toBe('open');
    expect(table.trpcCors(['customer.orders'])).toBe('store-origins');
    expect(table.trpcCors(['checkout.cart', 'orders.list'])).toBe('none');
    expect(table.trpcCors(['no.such'])).toBe('none');
  });

  it('refuses a procedure that lacks an auth surface, a CSRF or CORS policy, or error codes', () => {
    const bare = t.procedure
      .meta({ openapi: { method: 'GET', path: '/bare' } })
      .input(z.strictObject({}))
      .output(z.object({}))
      .query(() => ({}));
    expect(() => routeTable(router({ bare }))).toThrow(
      /bare: no auth surface[\s\S]*bare: no CSRF policy[\s\S]*bare: no CORS policy[\s\S]*bare: no error codes/,
    );
    const noErrors = publicProcedure
      .meta({ openapi: { method: 'GET', path: '/no-errors' } })
      .input(z.strictObject({}))
      .output(z.object({}))
      .query(() => ({}));
    expect(() => routeTable(router({ noErrors }))).toThrow(/noErrors: no error codes/);
    const noRoute = publicProcedure
      .meta({ errors: [] })
      .input(z.strictObject({}))
      .output(z.object({}))
      .query(() => ({}));
    expect(() => routeTable(router({ noRoute }))).toThrow(/noRoute: no REST route/);
  });

  it('refuses a CSRF policy that does not match what the route reads', () => {
    expect(policyGaps('x', { auth: { kind: 'session' }, csrf: 'none', cors: 'none', errors: [] }, 'POST')).toEqual([
      'x: reads a seller session on an unsafe call but declares no CSRF check',
    ]);
    expect(
      policyGaps(
        'y',
        { auth: { kind: 'apiKey', scope: 'order:read' }, csrf: 'required', cors: 'none', errors: [] },
        'GET',
      ),
    ).toEqual(["y: reads no seller session, so its CSRF policy is 'none'"]);
  });

  it('refuses a storeAccess declaration with a gap', () => {
    const declare = (path: `/${string}`, dashboard?: { tags: string[] }) =>
      storeResource({ scope: 'coupon:read', permission: 'manageProducts' })
        .meta({ openapi: { method: 'GET', path }, dashboard, errors: [] })
        .input(z.strictObject({ storeId: z.string() }))
        .output(z.object({}))
        .query(() => ({}));
    expect(() =>
      routeTable(router({ outside: declare('/dashboard/stores/{storeId}/things', { tags: ['x'] }) })),
    ).toThrow(/outside: a storeAccess route declares its merchant path, under \/merchant\/v1\/stores\/\{storeId\}/);
    expect(() => routeTable(router({ untagged: declare('/merchant/v1/stores/{storeId}/things') }))).toThrow(
      /untagged: a storeAccess route names the tags of its dashboard path/,
    );
    const keyOnly = publicProcedure
      .meta({ openapi: { method: 'GET', path: '/open' }, dashboard: { tags: ['x'] }, errors: [] })
      .input(z.strictObject({}))
      .output(z.object({}))
      .query(() => ({}));
    expect(() => routeTable(router({ keyOnly }))).toThrow(/keyOnly: only a storeAccess route has a dashboard path/);
    // It reads a session, so its unsafe calls check CSRF.
    expect(
      policyGaps(
        'w',
        {
          auth: { kind: 'storeAccess', scope: 'coupon:write' },
          csrf: 'none',
          cors: 'none',
          errors: [],
          dashboard: { tags: ['x'] },
        },
        'POST',
        { path: '/merchant/v1/stores/{storeId}/things' },
      ),
    ).toEqual(['w: reads a seller session on an unsafe call but declares no CSRF check']);
    // A plain route declares one credential per path.
    expect(
      policyGaps(
        'p',
        {
          auth: { kind: 'storeAccess', scope: 'coupon:read' },
          csrf: 'required',
          cors: 'none',
          errors: [],
          dashboard: { tags: ['x'] },
        },
        'GET',
        { path: '/api/merchant/v1/stores/{storeId}/things', plain: true },
      ),
    ).toEqual(['p: a plain route declares one credential per path, not storeAccess']);
  });

  it("gives a storeAccess procedure two routes, each with its credential's policy and codes, and /trpc the union", () => {
    const pairs = table.procedures.filter((entry) => entry.credential !== undefined);
    const byName = new Map<string, typeof pairs>();
    for (const entry of pairs) byName.set(entry.name, [...(byName.get(entry.name) ?? []), entry]);
    expect(byName.size).toBeGreaterThanOrEqual(30);
    for (const [name, [merchant, dashboard, ...rest]] of byName) {
      expect(rest, name).toEqual([]);
      const declared = (merchant!.procedure!._def as { meta?: { auth?: { kind: string } } }).meta?.auth;
      expect(declared?.kind, name).toBe('storeAccess');
      expect(merchant!.credential, name).toBe('apiKey');
      expect(merchant!.path, name).toMatch(/^\/api\/merchant\/v1\/stores\/\{storeId\}/);
      expect(merchant!.policy.auth.kind, name).toBe('apiKey');
      expect(merchant!.policy.csrf, name).toBe('none');
      expect(dashboard!.credential, name).toBe('session');
      expect(dashboard!.path, name).toBe(merchant!.path.replace('/api/merchant/v1/', '/api/dashboard/'));
      expect(dashboard!.policy.auth.kind, name).toBe('session');
      expect(dashboard!.policy.csrf, name).toBe('required');
      // The key's budget and scope on its path only; CSRF on the session's unsafe calls only.
      expect(merchant!.errorCodes, name).toEqual(expect.arrayContaining(['scope_missing', 'rate_limited']));
      expect(dashboard!.errorCodes, name).not.toContain('scope_missing');
      expect(dashboard!.errorCodes, name).not.toContain('rate_limited');
      expect(merchant!.errorCodes, name).not.toContain('csrf_failed');
      expect(dashboard!.errorCodes.includes('csrf_failed'), name).toBe(dashboard!.method !== 'GET');
      expect(table.procedure(name), name).toBe(merchant);
    }
    // Unbound (/trpc takes either credential): the codes of both.
    const declared: RoutePolicy = {
      auth: { kind: 'storeAccess', scope: 'coupon:write' },
      csrf: 'required',
      cors: 'none',
      errors: [],
    };
    const trpc = impliedCodes(declared, { method: 'POST', hasJsonBody: true });
    expect(trpc).toEqual(
      expect.arrayContaining(['unauthorized', 'scope_missing', 'rate_limited', 'permission_missing', 'csrf_failed']),
    );
  });

  it('refuses an idempotent procedure whose resolver cannot replay', () => {
    const create = publicProcedure
      .meta({ openapi: { method: 'POST', path: '/make' }, idempotency: { storeField: 'storeId' }, errors: [] })
      .input(z.strictObject({ storeId: z.string() }))
      .output(z.object({}))
      .mutation(() => ({}));
    expect(() => routeTable(router({ create }))).toThrow(
      /create: declares idempotency but its resolver is not replayable/,
    );
  });
});
