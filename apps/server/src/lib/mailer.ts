/**
 * Outgoing e-mail's transport: the SMTP connection (nodemailer, with SMTP_URL) the mail sender
 * (modules/mail/mail-sender.ts) hands each mail of the outbox to. Requests never send through it:
 * they record mail in the outbox (modules/mail/outbox.ts).
 */
import nodemailer, { type Transporter } from 'nodemailer';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  /** An HTML alternative to the text. */
  html?: string | undefined;
}

export interface MailTransport {
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/**
 * Budgets of one SMTP conversation, well inside the sender's lease (nodemailer's own defaults
 * wait up to 2 minutes for a connection and 10 for a silent socket).
 */
const CONNECTION_TIMEOUT_MS = 10_000;
const GREETING_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;
/** The longest one send can take: the sender's lease must be longer. */
export const SMTP_SEND_BUDGET_MS = CONNECTION_TIMEOUT_MS + GREETING_TIMEOUT_MS + SOCKET_TIMEOUT_MS;

export class SmtpTransport implements MailTransport {
  private readonly transport: Transporter;

  constructor(
    url: string,
    private readonly from: string,
  ) {
    this.transport = nodemailer.createTransport({
      url,
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      greetingTimeout: GREETING_TIMEOUT_MS,
      socketTimeout: SOCKET_TIMEOUT_MS,
    });
  }

  async send(mail: OutgoingMail): Promise<void> {
    await this.transport.sendMail({
      from: this.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      ...(mail.html === undefined ? {} : { html: mail.html }),
    });
  }

  close(): void {
    this.transport.close();
  }
}
