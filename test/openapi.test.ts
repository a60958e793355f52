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
import { appRouter } from '../apps/server/src/trpc/app-router.js';
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
  const document = buildOpenApiDocument(createProbeRouter());

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
      expect.arrayContaining(['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit', 'RateLimit-Policy']),
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
  it('serve the reference from this origin (Swagger UI under a strict policy) and the document itself', async () => {
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
      expect((await fetch(new URL(bundle!, `${app.url}/docs/`))).status).toBe(200);

      const served = await (await fetch(`${app.url}/docs/json`)).json();
      const document = await (await fetch(`${app.url}/api/openapi.json`)).json();
      expect(served).toEqual(document);
      expect(document).toEqual(JSON.parse(readFileSync(COMMITTED, 'utf8')));
    } finally {
      await app.close();
    }
  });
});
