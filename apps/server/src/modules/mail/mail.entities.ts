/**
 * The mail outbox: every e-mail the application sends is first a row here, written in the
 * transaction of the change it tells about (outbox.ts), then sent by the mail sender
 * (mail-sender.ts) with SMTP_URL, or kept and shown at /dev/mailbox without it.
 */
import { defineEntity, type InferEntity } from '@mikro-orm/core';

/**
 * `kept`: no SMTP server is configured; shown at /dev/mailbox, never sent. `queued`: waiting for
 * its next attempt (or under a sender's lease while `locked_until` is ahead). `sent`: the SMTP
 * server took it. `failed`: every attempt failed.
 */
export const MAIL_STATUSES = ['kept', 'queued', 'sent', 'failed'] as const;
export type MailStatus = (typeof MAIL_STATUSES)[number];

export const OutboundEmailSchema = defineEntity({
  name: 'OutboundEmail',
  tableName: 'outbound_email',
  indexes: [
    // Claims: the queued mail that is due.
    {
      name: 'outbound_email_due_index',
      expression: `create index "outbound_email_due_index" on "outbound_email" ("due_at") where "status" = 'queued'`,
    },
    // Pruning: finished mail past the retention, oldest first.
    {
      name: 'outbound_email_finished_index',
      expression: `create index "outbound_email_finished_index" on "outbound_email" ("created_at") where "status" in ('sent', 'failed')`,
    },
  ],
  properties: (p) => ({
    id: p.string().primary().length(32),
    to: p.string().length(320),
    subject: p.string().length(300),
    /** Sealed (outbox.ts). */
    text: p.text(),
    /** Sealed like the text; null for a plain-text mail. */
    html: p.text().nullable(),
    status: p.enum([...MAIL_STATUSES]).default('kept'),
    /** Attempts started (a claim counts one, whether or not its sender lived to record it). */
    attempts: p.integer().default(0),
    /** When the next attempt may start; null once the mail is finished or kept. */
    dueAt: p.datetime().nullable(),
    /** A sender's lease on the mail: until then no other sender claims it. */
    lockedUntil: p.datetime().nullable(),
    sentAt: p.datetime().nullable(),
    /** Why the last attempt failed (the SMTP server's answer or the connection error, never the text). */
    lastError: p.string().length(500).nullable(),
    /** A caller's name for the mail ("the receipt of order X"): a second mail with the same key is not recorded. */
    dedupeKey: p.string().length(200).nullable().unique('outbound_email_dedupe_key_unique'),
    createdAt: p.datetime(),
  }),
});
export type OutboundEmail = InferEntity<typeof OutboundEmailSchema>;
