/** The generated OpenAPI document and the drift check CI relies on. */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ZStoreLookupInput, ZStorePublic } from '@svc/schemas';
import { describe, expect, it } from 'vitest';
import { checkDocument } from '../apps/server/src/openapi/check.js';
import { buildOpenApiDocument } from '../apps/server/src/openapi/document.js';
import { lookupStoreBySubdomain } from '../apps/server/src/modules/stores/stores.service.js';
import { appRouter } from '../apps/server/src/api/app-router.js';
import { publicProcedure, router } from '../apps/server/src/trpc/procedures.js';
import { createProbeRouter } from './support/probe-router.js';
import { REPO_ROOT } from './support/server.js';

const COMMITTED = path.join(REPO_ROOT, 'openapi/openapi.json');
const WRITER = path.join(REPO_ROOT, 'apps/server/dist/openapi/write.js');

describe('openapi:check', () => {
  it('passes for the committed document and the current router', () => {
    expect(checkDocument(appRouter, COMMITTED)).toEqual({ ok: true });
    const run = spawnSync(process.execPath, [WRITER, '--check'], { encoding: 'utf8' });
    expect(run.status).toBe(0);
  });

  it('fails when a route changed and the document was not regenerated', () => {
    const changed = router({
      stores: router({
        lookup: publicProcedure
          .meta({ openapi: { method: 'GET', path: '/stores/{subdomain}' }, errors: [] })
          .input(ZStoreLookupInput)
          .output(ZStorePublic)
          .query(({ ctx, input }) => lookupStoreBySubdomain(ctx, input)),
      }),
    });
    expect(checkDocument(changed, COMMITTED)).toEqual({ ok: false, reason: 'drift' });
  });

  it('exits 1 from the command line on a stale file', () => {
    const stale = path.join(mkdtempSync(path.join(tmpdir(), 'svc-openapi-')), 'openapi.json');
    copyFileSync(COMMITTED, stale);
    const document = JSON.parse(readFileSync(stale, 'utf8'));
    delete document.paths['/api/store/{subdomain}'];
    writeFileSync(stale, JSON.stringify(document, null, 2) + '\n');
    const run = spawnSync(process.execPath, [WRITER, '--check', '--file', stale], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('out of date');
  });
});

describe('post-processing', () => {
  const document: Record<string, any> = buildOpenApiDocument(createProbeRouter());

  it('states 201 for a create and 204 for a delete', () => {
    const create = document.paths['/api/probe/items'].post.responses;
    expect(Object.keys(create)).toContain('201');
    expect(Object.keys(create)).not.toContain('200');
    const remove = document.paths['/api/probe/items/{id}'].delete.responses;
    expect(remove['204']).toEqual({ description: 'No content' });
  });

  it('states 429 with Retry-After and the rate-limit headers where a route is limited', () => {
    const limited = document.paths['/api/probe/limited'].get.responses['429'];
    expect(Object.keys(limited.headers)).toEqual(
      expect.arrayContaining([
        'Retry-After',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
        'RateLimit',
        'RateLimit-Policy',
      ]),
    );
    expect(document.paths['/api/probe/page'].get.responses['429']).toBeUndefined();
  });

  it('describes every error with our error body and declares the bearer scheme', () => {
    expect(document.components.schemas.Error.required).toEqual(['error', 'code']);
    const responses = document.paths['/api/probe/toggle'].post.responses;
    for (const status of ['400', '413', '415', '500']) {
      expect(responses[status].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});

describe('/docs and /api/openapi.json', () => {
  // An in-process server (migrated database) plus the document built on first use: ~25 s on a busy 2-core machine.
  it(
    'serve the reference from this origin (Swagger UI under a strict policy) and the document itself',
    { timeout: 90_000 },
    async () => {
      const { startInProcess } = await import('./support/in-process.js');
      const app = await startInProcess();
      try {
        const page = await fetch(`${app.url}/docs`);
        expect(page.status).toBe(200);
        expect(page.headers.get('content-type')).toContain('text/html');
        const csp = page.headers.get('content-security-policy') ?? '';
        expect(csp).toContain("default-src 'self'");
        expect(csp).toContain("frame-ancestors 'none'");
        const html = await page.text();
        // Every script and stylesheet is served from here.
        for (const [, src] of html.matchAll(/(?:src|href)="([^"]+)"/g)) expect(src).not.toMatch(/^https?:\/\//);
        const bundle = /src="([^"]*swagger-ui-bundle\.js)"/.exec(html)?.[1];
        expect(bundle).toBeDefined();
        const script = await fetch(new URL(bundle!, `${app.url}/docs/`));
        expect(script.status).toBe(200);
        // Read to the end: an unread body keeps the connection, and app.close() waits for it.
        expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(0);

        const served = await (await fetch(`${app.url}/docs/json`)).json();
        const document = await (await fetch(`${app.url}/api/openapi.json`)).json();
        expect(served).toEqual(document);
        expect(document).toEqual(JSON.parse(readFileSync(COMMITTED, 'utf8')));

        // The reference's parts (its definitions): the merchant API's operations and the events,
        // parts of the same document; an unknown part is our 404.
        const merchant = await (await fetch(`${app.url}/api/openapi/merchant`)).json();
        expect(Object.keys(merchant.paths).length).toBeGreaterThan(20);
        for (const [template, item] of Object.entries(merchant.paths as Record<string, object>)) {
          expect(template).toMatch(/^\/api\/merchant\/v1\//);
          expect(item).toEqual(document.paths[template]);
        }
        expect(merchant.webhooks).toEqual(document.webhooks);
        expect(merchant.components).toEqual(document.components);
        const unknown = await fetch(`${app.url}/api/openapi/nope`);
        expect(unknown.status).toBe(404);
        expect((await unknown.json()).code).toBe('not_found');
      } finally {
        await app.close();
      }
    },
  );
});

describe('the whole contract', () => {
  const document = JSON.parse(readFileSync(COMMITTED, 'utf8'));
  const operations = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([template, item]) =>
    Object.entries(item).map(([method, operation]) => ({ template, method: method.toUpperCase(), operation })),
  );

  it('passes Redocly lint with the recommended ruleset (npm run openapi:lint)', () => {
    const run = spawnSync(
      process.execPath,
      [
        path.join(REPO_ROOT, 'node_modules/@redocly/cli/bin/cli.js'),
        'lint',
        '--config',
        path.join(REPO_ROOT, 'redocly.yaml'),
        COMMITTED,
      ],
      { encoding: 'utf8', cwd: REPO_ROOT },
    );
    expect(run.stderr + run.stdout).toContain('Your API description is valid');
    expect(run.stderr + run.stdout).not.toMatch(/You have \d+ errors?/);
    expect(run.status).toBe(0);
  }, 60_000);

  it('states security on every operation, [] on public ones, and the CSRF header on every session write', () => {
    for (const { template, method, operation } of operations) {
      expect(Array.isArray(operation.security), `${method} ${template}`).toBe(true);
      if (method !== 'GET' && JSON.stringify(operation.security) === '[{"sessionCookie":[]}]') {
        expect(operation.parameters, `${method} ${template}`).toContainEqual(
          expect.objectContaining({ name: 'X-CSRF-Token', in: 'header', required: true }),
        );
      }
    }
    expect(document.paths['/api/store/{subdomain}'].get.security).toEqual([]);
    expect(document.paths['/api/auth/register'].post.security).toEqual([]);
  });

  it('declares 404 on every operation that looks up a path id other than the store', () => {
    for (const { template, method, operation } of operations) {
      const ids = [...template.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).filter((name) => name !== 'storeId');
      if (ids.length > 0) expect(Object.keys(operation.responses), `${method} ${template}`).toContain('404');
    }
    for (const path of [
      '/api/merchant/v1/stores/{storeId}/webhooks/{webhookId}/rotate',
      '/api/merchant/v1/stores/{storeId}/webhooks/{webhookId}/test',
      '/api/dashboard/stores/{storeId}/orders/{orderId}/refund',
      '/api/dashboard/stores/{storeId}/members',
    ]) {
      expect(document.paths[path].post.responses['404'], path).toBeDefined();
    }
  });

  it('declares 429 on every merchant route, and the rate-limit headers on every status of a limited route', () => {
    for (const { template, method, operation } of operations) {
      const limited = template.startsWith('/api/merchant/') || operation.responses['429'] !== undefined;
      if (template.startsWith('/api/merchant/'))
        expect(operation.responses['429'], `${method} ${template}`).toBeDefined();
      if (!limited) continue;
      for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
        expect(Object.keys(response.headers ?? {}), `${method} ${template} ${status}`).toEqual(
          expect.arrayContaining([
            'X-RateLimit-Limit',
            'X-RateLimit-Remaining',
            'X-RateLimit-Reset',
            'RateLimit',
            'RateLimit-Policy',
          ]),
        );
        if (status.startsWith('2') || status === '429')
          expect(response.headers['X-RateLimit-Remaining'].required).toBe(true);
      }
      expect(operation.responses['429'].headers['Retry-After'].required).toBe(true);
    }
  });

  it('describes the payment notifications, the checkout cookie and bounded integers', () => {
    const notification = document.paths['/api/payments/{gateway}/webhook'].post;
    expect(notification.requestBody.content['application/json'].schema).toBeDefined();
    expect(notification.parameters.map((parameter: any) => parameter.name)).toEqual(
      expect.arrayContaining(['Stripe-Signature', 'X-Test-Signature']),
    );
    expect(document.paths['/api/checkout/session'].get.parameters).toContainEqual(
      expect.objectContaining({ name: 'svc_checkout', in: 'cookie' }),
    );
    expect(document.paths['/api/checkout/enter'].post.responses['200'].headers['Set-Cookie']).toBeDefined();
    const text = JSON.stringify(document);
    expect(text).not.toContain('9007199254740991');
    const integers = [...text.matchAll(/"type":"integer"(,"minimum":(-?\d+))?/g)];
    expect(integers.length).toBeGreaterThan(0);
  });

  it('has a webhooks section with every event type, from the schemas the outbox validates against', async () => {
    const { EVENT_PAYLOADS, WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT } = await import('@svc/schemas');
    expect(Object.keys(document.webhooks).sort()).toEqual([...WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT].sort());
    expect(Object.keys(EVENT_PAYLOADS).sort()).toEqual(Object.keys(document.webhooks).sort());
    const paid = document.webhooks['order.paid'].post.requestBody.content['application/json'].schema;
    expect(paid.required).toEqual(['id', 'event', 'createdAt', 'storeId', 'livemode', 'data']);
    expect(paid.properties.event).toMatchObject({ const: 'order.paid' });
    expect(paid.properties.data.required).toEqual(['order']);
  });

  it("states each event's data in the events API's answers too, one member per event type", async () => {
    const { WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT } = await import('@svc/schemas');
    const committed: Record<string, any> = JSON.parse(readFileSync(COMMITTED, 'utf8'));
    const schemas: Record<string, any> = committed.components?.schemas ?? {};
    const deref = (schema: any): any =>
      typeof schema?.$ref === 'string' ? deref(schemas[schema.$ref.split('/').pop()]) : schema;
    /** The object members of a schema's unions and intersections that have an `event` property. */
    const bodies = (schema: any): any[] => {
      const s = deref(schema);
      for (const key of ['oneOf', 'anyOf', 'allOf']) if (Array.isArray(s?.[key])) return s[key].flatMap(bodies);
      return s?.properties?.event ? [s] : [];
    };
    const answer = (path: string) =>
      committed.paths[`/api/merchant/v1/stores/{storeId}${path}`].get.responses['200'].content['application/json']
        .schema;
    for (const schema of [answer('/events/{eventId}'), deref(answer('/events')).properties.events.items]) {
      const byEvent = Object.fromEntries(bodies(schema).map((body) => [deref(body.properties.event).const, body]));
      expect(Object.keys(byEvent).sort()).toEqual([...WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT].sort());
      expect(deref(byEvent['order.paid'].properties.data).required).toEqual(['order']);
      expect(deref(byEvent['product.updated'].properties.data).required).toEqual(['product']);
      expect(deref(byEvent['license.disabled'].properties.data).required).toEqual(['license']);
      expect(deref(byEvent['webhook.test'].properties.data).required).toEqual(['webhookId']);
    }
  });
});

describe('the response-conformance check (test/support/conformance.ts)', () => {
  const url = (path: string) => new URL(`http://127.0.0.1:1${path}`);
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    });
  const store = { id: 'abc', name: 'Shop', subdomain: 'shop' };

  it('accepts a conforming answer, and an unknown route answered 404 in our body', async () => {
    const { checkResponse } = await import('./support/conformance.js');
    await expect(
      checkResponse('GET', url('/api/nowhere'), json(404, { error: 'Not found.', code: 'not_found' })),
    ).resolves.toBeUndefined();
    await expect(
      checkResponse('GET', url('/api/store/shop'), json(404, { error: 'Not found.', code: 'not_found' })),
    ).resolves.toBeUndefined();
    await expect(
      checkResponse('OPTIONS', url('/api/store/shop'), new Response(null, { status: 204 })),
    ).resolves.toBeUndefined();
  });

  it('fails an undeclared status, a body that does not match, a missing required header and an undocumented path', async () => {
    const { checkResponse } = await import('./support/conformance.js');
    await expect(
      checkResponse('GET', url('/api/store/shop'), json(418, { error: 'x', code: 'internal_error' })),
    ).rejects.toThrow(/GET \/api\/store\/shop -> 418: status 418 is not declared/);
    await expect(checkResponse('GET', url('/api/store/shop'), json(404, { error: 'Not found.' }))).rejects.toThrow(
      /body does not match.*code/,
    );
    await expect(
      checkResponse('GET', url('/api/store/shop'), json(200, { ...store, extra: -1, id: 5 })),
    ).rejects.toThrow(/body does not match/);
    await expect(
      checkResponse(
        'GET',
        url('/api/merchant/v1/stores/abc/orders'),
        json(429, { error: 'Too many.', code: 'rate_limited' }),
      ),
    ).rejects.toThrow(/required header/);
    await expect(checkResponse('GET', url('/api/nowhere'), json(200, {}))).rejects.toThrow(/not in the document/);
    await expect(
      checkResponse(
        'GET',
        url('/api/nowhere'),
        new Response('<html>', { status: 404, headers: { 'content-type': 'text/html' } }),
      ),
    ).rejects.toThrow(/not our JSON error body/);
  });
});
