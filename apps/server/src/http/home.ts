/**
 * `GET /`: what a person who opens the service's address finds — the API reference, the demo
 * store's pages when `svc seed-demo` made one, and the health endpoints. No script.
 */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.js';
import { DEMO_SUBDOMAIN } from '../demo.js';
import { escapeHtml } from '../lib/html.js';
import { StoreSchema } from '../modules/stores/stores.entities.js';
import { sendPage } from './pages.js';

const link = (href: string, text: string, note = '') =>
  `<li><a href="${escapeHtml(href)}">${escapeHtml(text)}</a>${note ? ` — ${escapeHtml(note)}` : ''}</li>`;

export async function homePlugin(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;
  app.get('/', async (_request, reply) => {
    const demo = await deps.orm.em.fork().findOne(StoreSchema, { subdomain: DEMO_SUBDOMAIN }, { fields: ['id', 'name', 'subdomain'] });
    const demoSection = demo
      ? `<h2>Demo store: ${escapeHtml(demo.name)}</h2>
<ul>
${link(`/account/${demo.subdomain}`, 'Customer area', 'sign in with an e-mailed code')}
${link(`/api/store/${demo.subdomain}`, 'Store (JSON)')}
${link(`/api/stores/by-subdomain/${demo.subdomain}/storefront`, 'Storefront (JSON)', 'its products')}
${deps.config.isProduction ? '' : link('/dev/mailbox', 'Mailbox', 'e-mail kept without SMTP_URL')}
</ul>`
      : `<p>No demo store yet: run <code>node apps/server/dist/main.js seed-demo</code> beside this server.</p>`;
    return sendPage(reply, {
      title: 'svc',
      body: `<h1>svc</h1>
<p>A storefront and digital-goods selling platform: this is its API server.</p>
<h2>API</h2>
<ul>
${link('/docs', 'API reference')}
${link('/api/openapi.json', 'OpenAPI document')}
</ul>
${demoSection}
<h2>Operations</h2>
<ul>
${link('/healthz', 'Liveness')}
${link('/readyz', 'Readiness', 'database and Redis')}
${link('/metrics', 'Metrics', 'Prometheus')}
</ul>`,
    });
  });
}
