/** /dev/mailbox: the e-mail kept in the outbox table, for development without SMTP. Never in production. */
import { escapeHtml } from '../lib/html.js';
import { keptMail } from '../modules/mail/outbox.js';
import type { RoutePolicy } from '../trpc/policy.js';
import { plainRoute, type PlainContext } from './plain-route.js';

const latest = (ctx: PlainContext) => keptMail(ctx);
const POLICY: RoutePolicy = { auth: { kind: 'public', audience: 'seller' }, csrf: 'none', cors: 'none', errors: [] };
const enabled = (config: { isProduction: boolean }) => !config.isProduction;

export const MAILBOX_ROUTES = [
  plainRoute({
    name: 'dev.mailboxJson',
    method: 'GET',
    path: '/dev/mailbox.json',
    body: 'none',
    policy: POLICY,
    openapi: false,
    enabled,
    handler: async (ctx) => ({
      emails: (await latest(ctx)).map((mail) => ({
        id: mail.id,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        createdAt: mail.createdAt.toISOString(),
      })),
    }),
  }),
  plainRoute({
    name: 'dev.mailbox',
    method: 'GET',
    path: '/dev/mailbox',
    body: 'none',
    policy: POLICY,
    openapi: false,
    enabled,
    async handler(ctx, _request, reply) {
      const items = (await latest(ctx))
        .map(
          (mail) =>
            `<article><h2>${escapeHtml(mail.subject)}</h2><p>To ${escapeHtml(mail.to)} at ${mail.createdAt.toISOString()}</p><pre>${escapeHtml(mail.text)}</pre></article>`,
        )
        .join('<hr>');
      return reply
        .type('text/html; charset=utf-8')
        .send(
          `<!doctype html><html lang="en"><meta charset="utf-8"><title>Mailbox</title><h1>Mailbox (development)</h1>${items || '<p>No e-mail yet.</p>'}</html>`,
        );
    },
  }),
];
