/**
 * The OpenAPI document at /api/openapi.json and a Swagger UI at /docs. Every asset comes
 * from the installed swagger-ui-dist package, served from this origin; nothing from a CDN.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import swaggerUiDist from 'swagger-ui-dist';

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
};

const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#swagger-ui', deepLinking: true });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>svc API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

const DOCS_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

export async function docsPlugin(app: FastifyInstance, opts: { document: () => object }): Promise<void> {
  const assetDir = swaggerUiDist.getAbsoluteFSPath();
  const cache = new Map<string, Buffer>();
  let documentJson: string | undefined;

  app.get('/api/openapi.json', async (_request, reply) => {
    documentJson ??= JSON.stringify(opts.document());
    return reply.type('application/json; charset=utf-8').send(documentJson);
  });

  app.get('/docs', async (_request, reply) =>
    reply.header('Content-Security-Policy', DOCS_CSP).type('text/html; charset=utf-8').send(PAGE),
  );

  app.get('/docs/init.js', async (_request, reply) =>
    reply.type('application/javascript; charset=utf-8').send(INIT_SCRIPT),
  );

  app.get<{ Params: { asset: string } }>('/docs/:asset', async (request, reply) => {
    const type = ASSETS[request.params.asset];
    if (!type) return reply.callNotFound();
    let body = cache.get(request.params.asset);
    if (!body) {
      body = await readFile(path.join(assetDir, request.params.asset));
      cache.set(request.params.asset, body);
    }
    return reply.header('Cache-Control', 'public, max-age=86400').type(type).send(body);
  });
}
