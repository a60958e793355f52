/**
 * `GET /`: what a person who opens the service's address finds — the seller dashboard, the API
 * reference, the demo store's pages when `svc seed-demo` made one, and the health endpoints. No script.
 */
import { DEMO_SUBDOMAIN } from '../demo.js';
import { escapeHtml } from '../lib/html.js';
import { StoreSchema } from '../modules/stores/stores.entities.js';
import { metricsOnApiPort } from './ops.js';
import { sendPage } from './pages.js';
import { plainRoute } from './plain-route.js';

const link = (href: string, text: string, note = '') =>
  `<li><a href="${escapeHtml(href)}">${escapeHtml(text)}</a>${note ? ` — ${escapeHtml(note)}` : ''}</li>`;

export const homeRoute = plainRoute({
  name: 'pages.home',
  method: 'GET',
  path: '/',
  body: 'none',
  policy: { auth: { kind: 'public', audience: 'storefront' }, csrf: 'none', cors: 'none', errors: [] },
  openapi: false,
  async handler(ctx, _request, reply) {
    const { deps } = ctx;
    const demo = await ctx.em.findOne(
      StoreSchema,
      { subdomain: DEMO_SUBDOMAIN },
      { fields: ['id', 'name', 'subdomain'] },
    );
    const demoSection = demo
      ? `<h2>Demo store: ${escapeHtml(demo.name)}</h2>
<ul>
${link(`/s/${demo.subdomain}`, 'View store', 'its hosted storefront')}
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
<h2>Sellers</h2>
<ul>
${link('/dashboard/', 'Dashboard', 'sign in or create an account, then set up your store')}
</ul>
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
${metricsOnApiPort(deps.config) ? link('/metrics', 'Metrics', 'Prometheus') : ''}
</ul>`,
    });
  },
});
