/**
 * Outgoing e-mail. With SMTP_URL, mail goes out through nodemailer; without it, it is
 * kept in the outbox table, its text sealed, and shown at /dev/mailbox (outside production;
 * production refuses to start without SMTP_URL).
 */
import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Orm } from '../db/orm.js';
import { OutboundEmailSchema, type OutboundEmail } from '../modules/mail/mail.entities.js';
import type { Clock } from './clock.js';
import { deriveKey, seal, unseal } from './crypto.js';
import { newId } from './ids.js';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<void>;
}

export class SmtpMailer implements Mailer {
  private readonly transport: Transporter;

  constructor(
    url: string,
    private readonly from: string,
  ) {
    this.transport = nodemailer.createTransport(url);
  }

  async send(mail: OutgoingMail): Promise<void> {
    await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
  }

  close(): void {
    this.transport.close();
  }
}

/**
 * Kept mail carries what the mail is for (password-reset links, sign-in codes, order links), so
 * its text is sealed under the app key (`outbox-mail`): a copy of the table holds none of them.
 */
const mailKey = (encryptionKey: Buffer) => deriveKey(encryptionKey, 'outbox-mail');
/** Kept before texts were sealed (no prefix): shown as they are. */
const SEALED_PREFIX = 'sealed:v1:';
const openText = (encryptionKey: Buffer, text: string) =>
  text.startsWith(SEALED_PREFIX) ? unseal(mailKey(encryptionKey), text.slice(SEALED_PREFIX.length)) : text;

export class OutboxMailer implements Mailer {
  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
    private readonly encryptionKey: Buffer,
  ) {}

  async send(mail: OutgoingMail): Promise<void> {
    await this.orm.em
      .fork()
      .insert(OutboundEmailSchema, {
        id: newId(),
        ...mail,
        text: `${SEALED_PREFIX}${seal(mailKey(this.encryptionKey), mail.text)}`,
        createdAt: this.clock.now(),
      });
  }
}

/** Kept mail matching `where`, newest first, its text opened (the mailbox, tests). */
export async function keptMail(
  em: EntityManager,
  encryptionKey: Buffer,
  where: FilterQuery<OutboundEmail> = {},
  limit = 50,
): Promise<OutboundEmail[]> {
  const rows = await em.find(OutboundEmailSchema, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit });
  return rows.map((row) => ({ ...row, text: openText(encryptionKey, row.text) }));
}
