/**
 * Outgoing e-mail. With SMTP_URL, mail goes out through nodemailer; without it, it is
 * kept in the outbox table and shown at /dev/mailbox (outside production).
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { Orm } from '../db/orm.js';
import { OutboundEmailSchema } from '../modules/mail/mail.entities.js';
import type { Clock } from './clock.js';
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

  constructor(url: string, private readonly from: string) {
    this.transport = nodemailer.createTransport(url);
  }

  async send(mail: OutgoingMail): Promise<void> {
    await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
  }

  close(): void {
    this.transport.close();
  }
}

export class OutboxMailer implements Mailer {
  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
  ) {}

  async send(mail: OutgoingMail): Promise<void> {
    await this.orm.em.fork().insert(OutboundEmailSchema, { id: newId(), ...mail, createdAt: this.clock.now() });
  }
}
