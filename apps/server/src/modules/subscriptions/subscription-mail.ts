/**
 * What the subscription mails say (the machine's `mail` effects), from plain data: the subject on
 * one line, the text, and an HTML alternative made like the receipt's (receipts/receipt-mail.ts):
 * inline styles only, nothing fetched, every piece of seller or buyer text escaped. Each names the
 * store and the product; dates are written in words in UTC (a buyer anywhere reads one day, and no
 * "03/04" is read two ways), amounts in the subscription's currency with its places.
 */
import type { TCancellationReason } from '@svc/schemas';
import { escapeHtml } from '../../lib/html.js';
import { mailDocument } from '../mail/mail-html.js';
import { formatMoney } from '../../lib/money.js';
import { oneLine, type ReceiptMail } from '../receipts/receipt-mail.js';
import type { Cadence } from './billing-period.js';

interface Common {
  storeName: string;
  productName: string;
  currency: string;
  /** What the charge the mail is about takes, in minor units of `currency`. */
  amountMinor: number;
  /** The cadence the amount is billed at. */
  cadence: Cadence;
  /** The buyer's page of the subscription, where it is canceled; null when there is none. */
  manageUrl?: string | null | undefined;
}

export type SubscriptionMailContent =
  | (Common & { kind: 'trial_ending'; trialEnd: Date })
  | (Common & { kind: 'upcoming_renewal'; renewsAt: Date })
  /** `payUrl` pays the outstanding charge (or saves a new card); `nextRetryAt` null when no retry is left. */
  | (Common & { kind: 'payment_failed'; payUrl: string; nextRetryAt: Date | null })
  | (Common & { kind: 'ended'; endedAt: Date; reason: TCancellationReason | null });

export type SubscriptionMailText = ReceiptMail;

const day = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });

/** `12 March 2027`, in UTC. */
export const formatDay = (date: Date) => day.format(date);

/** `month`, `3 months`, `year`: what "per" is followed by. */
export function intervalWords(cadence: Cadence): string {
  return cadence.intervalCount === 1 ? cadence.interval : `${cadence.intervalCount} ${cadence.interval}s`;
}

const REASONS: Record<TCancellationReason, string> = {
  payment_failed: 'we could not collect payment',
  requested_by_customer: 'it was canceled',
  requested_by_merchant: 'it was canceled',
};

/** One paragraph of the mail: its text, and optionally a link shown as a button in the HTML. */
type Part = { text: string } | { link: string; label: string; lead: string };

export function subscriptionMail(content: SubscriptionMailContent): SubscriptionMailText {
  const store = oneLine(content.storeName);
  const product = oneLine(content.productName);
  const price = formatMoney(content.amountMinor, content.currency);
  const perInterval = `${price} / ${intervalWords(content.cadence)}`;
  const manage = content.manageUrl
    ? [{ link: content.manageUrl, label: 'Manage your subscription', lead: 'Manage or cancel your subscription:' }]
    : [];
  let subject: string;
  let heading: string;
  let parts: Part[];
  switch (content.kind) {
    case 'trial_ending': {
      const date = formatDay(content.trialEnd);
      subject = `Your ${product} trial ends on ${date} — ${store}`;
      heading = `Your ${product} trial ends on ${date}`;
      parts = [
        { text: `Your free trial of ${product} from ${store} ends on ${date}.` },
        {
          text: `Your first payment of ${perInterval} is charged then, and every ${intervalWords(content.cadence)} after that.`,
        },
        content.manageUrl
          ? {
              link: content.manageUrl,
              label: 'Manage your subscription',
              lead: 'To cancel before then, and pay nothing:',
            }
          : { text: `To cancel before then, and pay nothing, contact ${store}.` },
      ];
      break;
    }
    case 'upcoming_renewal': {
      const date = formatDay(content.renewsAt);
      subject = `Your ${product} subscription renews on ${date} — ${store}`;
      heading = `Your ${product} subscription renews on ${date}`;
      parts = [
        { text: `Your ${product} subscription from ${store} renews on ${date} for ${price}.` },
        { text: `It is billed at ${perInterval}; nothing needs doing to keep it.` },
        ...manage,
      ];
      break;
    }
    case 'payment_failed': {
      subject = `Payment failed for your ${product} subscription — ${store}`;
      heading = `We could not collect your ${product} payment`;
      parts = [
        { text: `The renewal payment of ${price} for your ${product} subscription from ${store} failed.` },
        { text: 'Your access continues for now.' },
        { link: content.payUrl, label: 'Pay now', lead: 'Pay now or update your card:' },
        {
          text: content.nextRetryAt
            ? `Otherwise we will try your card again on ${formatDay(content.nextRetryAt)}.`
            : 'We will not try your card again: without a payment the subscription ends.',
        },
        ...manage,
      ];
      break;
    }
    case 'ended': {
      const date = formatDay(content.endedAt);
      const reason = content.reason ? ` because ${REASONS[content.reason]}` : '';
      subject = `Your ${product} subscription has ended — ${store}`;
      heading = `Your ${product} subscription has ended`;
      parts = [
        { text: `Your ${product} subscription from ${store} ended on ${date}${reason}.` },
        { text: 'You will not be charged for it again.' },
      ];
      break;
    }
  }

  const text = parts.map((part) => ('text' in part ? part.text : `${part.lead}\n${part.link}`)).join('\n\n');
  return { subject, text, html: layout(subject, heading, parts) };
}

function layout(subject: string, heading: string, parts: Part[]): string {
  const body = parts
    .map((part) => {
      if ('text' in part) return `<p style="margin:0 0 16px;">${escapeHtml(part.text)}</p>`;
      const href = escapeHtml(part.link);
      return `<p style="margin:0 0 8px;">${escapeHtml(part.lead)}</p>
<p style="margin:0 0 16px;"><a href="${href}" style="display:inline-block;padding:12px 20px;background:#1d4ed8;color:#ffffff;text-decoration:none;border-radius:6px;font-weight:bold;">${escapeHtml(part.label)}</a></p>
<p style="margin:0 0 16px;font-size:14px;color:#4b4b4b;">If the button does not work, copy this link into your browser:<br><a href="${href}" style="color:#1d4ed8;word-break:break-all;">${href}</a></p>`;
    })
    .join('\n');
  return mailDocument(
    subject,
    `<h1 style="margin:0 0 16px;font-size:22px;">${escapeHtml(heading)}</h1>
${body}`,
  );
}
