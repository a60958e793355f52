/**
 * The mail outbox's one writer, and its reader for the development mailbox. Every e-mail is
 * recorded here through the caller's EntityManager, in the caller's transaction when there is
 * one, so a request never talks to SMTP: it commits the mail with the change it tells about and
 * answers. With SMTP_URL the mail is `queued` and the mail sender (mail-sender.ts) sends it;
 * without, it is `kept` (outside production; production refuses to start without SMTP_URL) and
 * shown at /dev/mailbox and to tests (keptMail), never sent.
 */
import type { FilterQuery } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../request/context.js';
import type { Config } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import { deriveKey, seal, unseal } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import type { OutgoingMail } from '../../lib/mailer.js';
import { OutboundEmailSchema, type OutboundEmail } from './mail.entities.js';
import { insertMail } from './mail.repo.js';
import { wakeMailSendersAfterCommit } from './wake.js';

/**
 * Mail carries what it is for (password-reset links, sign-in codes, order links), so its text
 * and html are sealed under the app key (`outbox-mail`): a copy of the table holds none of them.
 */
const mailKey = (encryptionKey: Buffer) => deriveKey(encryptionKey, 'outbox-mail');
/** Kept before texts were sealed (no prefix): shown as they are. */
const SEALED_PREFIX = 'sealed:v1:';

export const sealMailText = (encryptionKey: Buffer, text: string) =>
  `${SEALED_PREFIX}${seal(mailKey(encryptionKey), text)}`;
export const openMailText = (encryptionKey: Buffer, text: string) =>
  text.startsWith(SEALED_PREFIX) ? unseal(mailKey(encryptionKey), text.slice(SEALED_PREFIX.length)) : text;

export interface MailToRecord extends OutgoingMail {
  /**
   * Names the mail ("the receipt of order X"): recording a second mail with the same key does
   * nothing, across a crash and a retry of the caller's work.
   */
  dedupeKey?: string | undefined;
  /**
   * False for mail about a test-mode object (a test order's receipt, its tickets, a test endpoint):
   * it is `kept` for the development mailbox and never sent, SMTP_URL or not (docs/architecture.md, Test mode).
   */
  livemode?: boolean;
}

/**
 * Records `mail` in the outbox in the context's transaction (if any) and wakes this process's
 * senders once that commits. Returns false when its dedupe key was recorded before.
 */
export async function recordMail(
  ctx: Pick<ServiceContext, 'em'> & { deps: { config: Pick<Config, 'encryptionKey' | 'smtpUrl'>; clock: Clock } },
  mail: MailToRecord,
): Promise<boolean> {
  const { em, deps } = ctx;
  const now = deps.clock.now();
  const sending = !!deps.config.smtpUrl && mail.livemode !== false;
  const inserted = await insertMail(em, {
    id: newId(),
    to: mail.to,
    subject: mail.subject,
    text: sealMailText(deps.config.encryptionKey, mail.text),
    html: mail.html === undefined ? null : sealMailText(deps.config.encryptionKey, mail.html),
    status: sending ? 'queued' : 'kept',
    dueAt: sending ? now : null,
    dedupeKey: mail.dedupeKey ?? null,
    createdAt: now,
  });
  if (inserted && sending) wakeMailSendersAfterCommit(em);
  return inserted;
}

/** Kept mail (recorded without SMTP_URL) matching `where`, newest first, text and html opened (the mailbox, tests). */
export async function keptMail(
  ctx: Pick<ServiceContext, 'em'> & { deps: { config: Pick<Config, 'encryptionKey'> } },
  where: FilterQuery<OutboundEmail> = {},
  limit = 50,
): Promise<OutboundEmail[]> {
  const { encryptionKey } = ctx.deps.config;
  const rows = await ctx.em.find(
    OutboundEmailSchema,
    { $and: [{ status: 'kept' }, where] },
    { orderBy: { createdAt: 'desc', id: 'desc' }, limit },
  );
  return rows.map((row) => ({
    ...row,
    text: openMailText(encryptionKey, row.text),
    html: row.html == null ? null : openMailText(encryptionKey, row.html),
  }));
}
