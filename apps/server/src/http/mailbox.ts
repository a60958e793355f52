/** /dev/mailbox: the e-mail kept in the outbox table, for development without SMTP. Never in production. */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.js';
import { escapeHtml } from '../lib/html.js';
import { OutboundEmailSchema } from '../modules/mail/mail.entities.js';

export async function mailboxPlugin(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const latest = () => opts.deps.orm.em.fork().find(OutboundEmailSchema, {}, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: 50 });

  app.get('/dev/mailbox.json', async () => ({
    emails: (await latest()).map((mail) => ({ id: mail.id, to: mail.to, subject: mail.subject, text: mail.text, createdAt: mail.createdAt.toISOString() })),
  }));

  app.get('/dev/mailbox', async (_request, reply) => {
    const items = (await latest())
      .map((mail) => `<article><h2>${escapeHtml(mail.subject)}</h2><p>To ${escapeHtml(mail.to)} at ${mail.createdAt.toISOString()}</p><pre>${escapeHtml(mail.text)}</pre></article>`)
      .join('<hr>');
    return reply
      .type('text/html; charset=utf-8')
      .send(`<!doctype html><html lang="en"><meta charset="utf-8"><title>Mailbox</title><h1>Mailbox (development)</h1>${items || '<p>No e-mail yet.</p>'}</html>`);
  });
}
