/**
 * The mail sender: takes due mail from the outbox under a lease and hands it to SMTP. Any number
 * of senders (one in every `svc serve` and `svc worker` with SMTP_URL) share the outbox: a claim
 * skips rows another holds (FOR UPDATE SKIP LOCKED), and a lease a dead sender left behind is
 * taken over once it runs out. A failed send is tried again on MAIL_RETRY_DELAYS_MS, then the mail
 * is `failed`. Sending is at least once: a sender that dies between the SMTP server's "250 OK"
 * and recording it leaves the mail to be sent again after its lease.
 * Wake-ups: a commit that recorded mail wakes the senders of its process (wake.ts); polling
 * (MAIL_POLL_MS) finds the mail of other processes and the retries that came due.
 */
import type { AppDeps } from '../../deps.js';
import { SMTP_SEND_BUDGET_MS, type MailTransport } from '../../lib/mailer.js';
import { claimDueMail, markAttemptFailed, markSent, type ClaimedMail } from './mail.repo.js';
import { openMailText } from './outbox.js';
import { mailWakeHubFor } from './wake.js';

/** Delay before attempt n + 1 after attempt n failed: 9 attempts over about 8 hours. */
export const MAIL_RETRY_DELAYS_MS = [
  5_000,
  30_000,
  2 * 60_000,
  10 * 60_000,
  30 * 60_000,
  3_600_000,
  2 * 3_600_000,
  4 * 3_600_000,
] as const;
export const MAIL_MAX_ATTEMPTS = MAIL_RETRY_DELAYS_MS.length + 1;
/** Jitter on every retry delay: +/- this fraction, so mail that failed together does not retry together. */
const RETRY_JITTER = 0.1;
/** How long a claim holds a mail: past it the mail is another sender's to take (longer than one send can take). */
export const MAIL_LEASE_MS = SMTP_SEND_BUDGET_MS + 30_000;
/** Mails claimed (and sent at once) per claim. */
const BATCH = 8;

/** When the attempt after the failed `attempt` is due; null after the last one. */
export function nextMailAttemptAt(now: Date, attempt: number, random: () => number = Math.random): Date | null {
  const base = MAIL_RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  return new Date(now.getTime() + Math.round(base * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random())));
}

/** What an SMTP failure says, without the mail: nodemailer's code and the server's answer or the socket error. */
function describeSendFailure(error: unknown): string {
  const e = error as { code?: unknown; responseCode?: unknown; message?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : String(error);
  const code = typeof e?.code === 'string' ? `${e.code}: ` : '';
  return `${code}${message}`.replace(/\s+/g, ' ').slice(0, 500);
}

export interface MailSenderOptions {
  /** Look for due mail this often without a wake-up (default MAIL_POLL_MS). */
  pollMs?: number;
  /** How long a claim holds a mail (default MAIL_LEASE_MS). */
  leaseMs?: number;
  /** Source of the retry jitter, in [0, 1). */
  random?: () => number;
}

export interface MailSendCounts {
  sent: number;
  /** Failed attempts queued again. */
  retried: number;
  /** Failed attempts after which the mail is given up (`failed`). */
  failed: number;
}

export class MailSender {
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly random: () => number;
  private running = false;
  private stopping = false;
  private loop: Promise<void> | undefined;
  private signal: (() => void) | undefined;
  private kicked = false;
  private readonly onWake = () => this.wake();

  constructor(
    private readonly deps: AppDeps,
    private readonly transport: MailTransport,
    options: MailSenderOptions = {},
  ) {
    this.pollMs = options.pollMs ?? deps.config.mailPollMs;
    this.leaseMs = options.leaseMs ?? MAIL_LEASE_MS;
    this.random = options.random ?? Math.random;
  }

  /** Runs until stop(): wake-ups and polling. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    mailWakeHubFor(this.deps.orm).listeners.add(this.onWake);
    this.loop = this.run();
  }

  /** Stops claiming and waits for the sends in flight to finish and be recorded; closes the transport. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping = true;
    mailWakeHubFor(this.deps.orm).listeners.delete(this.onWake);
    this.kick();
    await this.loop;
    this.transport.close();
  }

  /** Mail is due now (a commit recorded some). */
  wake(): void {
    this.kick();
  }

  private kick(): void {
    this.kicked = true;
    this.signal?.();
  }

  /** Claims and sends until nothing due is left. Returns what this pass did. */
  async runOnce(): Promise<MailSendCounts> {
    const counts: MailSendCounts = { sent: 0, retried: 0, failed: 0 };
    for (;;) {
      const now = this.deps.clock.now();
      const claimed = await claimDueMail(this.deps.orm.em.fork(), {
        now,
        lease: new Date(now.getTime() + this.leaseMs),
        limit: BATCH,
      });
      const outcomes = await Promise.allSettled(claimed.map((mail) => this.send(mail)));
      for (const outcome of outcomes) {
        if (outcome.status === 'fulfilled') counts[outcome.value]++;
        // Unrecorded, the mail stays leased and is taken over (sent again) once its lease runs out.
        else this.deps.log.error({ err: outcome.reason }, 'mail attempt could not be recorded');
      }
      if (claimed.length < BATCH || this.stopping) return counts;
    }
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      this.kicked = false;
      try {
        await this.runOnce();
        failures = 0;
      } catch (error) {
        failures++;
        this.deps.log.error({ err: error }, 'mail sender pass failed');
      }
      if (!this.running) break;
      if (this.kicked && failures === 0) continue;
      const wait = failures > 0 ? Math.min(this.pollMs * 2 ** failures, 30_000) : this.pollMs;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.signal = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.signal = undefined;
    }
  }

  /** One attempt at one mail, and its outcome recorded under the claim's lease. */
  private async send(mail: ClaimedMail): Promise<keyof MailSendCounts> {
    const key = this.deps.config.encryptionKey;
    try {
      await this.transport.send({
        to: mail.to,
        subject: mail.subject,
        text: openMailText(key, mail.text),
        html: mail.html === null ? undefined : openMailText(key, mail.html),
      });
    } catch (error) {
      const reason = describeSendFailure(error);
      const nextAt = nextMailAttemptAt(this.deps.clock.now(), mail.attempt, this.random);
      const recorded = await markAttemptFailed(this.deps.orm.em.fork(), mail, reason, nextAt);
      // The mail's id and the failure only: never its text, and not its address.
      const fields = { mailId: mail.id, attempt: mail.attempt, reason, nextAttemptAt: nextAt?.toISOString() };
      if (!recorded) this.deps.log.warn(fields, 'mail attempt failed; its lease was taken over meanwhile');
      else if (nextAt) this.deps.log.warn(fields, 'mail not sent; will try again');
      else this.deps.log.error(fields, `mail not sent after ${mail.attempt} attempts; given up`);
      return nextAt ? 'retried' : 'failed';
    }
    const recorded = await markSent(this.deps.orm.em.fork(), mail, this.deps.clock.now());
    if (!recorded)
      this.deps.log.warn(
        { mailId: mail.id },
        'mail sent, but its lease was taken over meanwhile: it may be sent twice',
      );
    return 'sent';
  }
}
