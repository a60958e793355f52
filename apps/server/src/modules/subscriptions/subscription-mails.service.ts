/**
 * The buyer's subscription mails (the machine's `mail` effects: trial ending, upcoming renewal,
 * payment failed, ended), recorded in the mail outbox inside the caller's transaction, the one
 * that applies the move, so the mail commits with the change it tells about and a rollback takes
 * it away, as the receipt does (receipts/receipts.service.ts). Each is named by the subscription,
 * its kind and the occasion it is about, so a retried move or a crash and retry records it once;
 * a test subscription's mail is kept for the development mailbox, never sent. What it says is
 * subscription-mail.ts's.
 */
import type { ServiceContext } from '../request/context.js';
import { recordMail } from '../mail/outbox.js';
import { StoreSchema } from '../stores/stores.entities.js';
import { amountOf, type BillingTerms, type SubscriptionMail, type SubscriptionState } from './subscription-machine.js';
import { subscriptionMail, type SubscriptionMailContent } from './subscription-mail.js';
import { stateOf } from './subscription-views.js';
import type { Subscription } from './subscriptions.entities.js';

/**
 * The occasion a mail is about: the period end for the notices (one per period), the failure's
 * time for a failed payment (one per dunning round), the end for the ended mail.
 */
function occasionOf(subscription: Subscription, kind: SubscriptionMail, now: Date): Date {
  switch (kind) {
    case 'trial_ending':
    case 'upcoming_renewal':
      return subscription.currentPeriodEnd;
    case 'payment_failed':
      return subscription.pastDueAt ?? now;
    case 'ended':
      return subscription.endedAt ?? now;
  }
}

/** The outbox's name for a subscription mail: recorded once per occasion, whatever calls it again. */
export const subscriptionMailDedupeKey = (subscription: Subscription, kind: SubscriptionMail, now: Date) =>
  `subscription:${subscription.id}:${kind}:${occasionOf(subscription, kind, now).toISOString()}`;

/** What a charge of `terms` takes once the credit balance has paid what it can (as the machine charges). */
function chargeOf(terms: BillingTerms, state: SubscriptionState): number {
  const amount = amountOf(terms);
  return amount - Math.min(state.creditMinor, amount);
}

/**
 * Records the `kind` mail of `subscription` (its row as the move left it) in the context's
 * transaction. `payUrl` is required for `payment_failed`; `manageUrl` is the buyer's link to
 * manage it (the store's customer area unless given). Nothing when the subscription has no buyer e-mail. Returns whether a
 * mail was recorded now (false: none, or this occasion's was recorded before).
 */
export async function recordSubscriptionMail(
  ctx: ServiceContext,
  input: {
    subscription: Subscription;
    kind: SubscriptionMail;
    now: Date;
    payUrl?: string | null;
    manageUrl?: string | null;
  },
): Promise<boolean> {
  const { subscription, kind, now } = input;
  const { em, deps } = ctx;
  if (!subscription.customerEmail) return false;
  const store = await em.findOneOrFail(StoreSchema, { id: subscription.store.id });
  const state = stateOf(subscription);
  // The renewal applies a pending change first (subscription-machine.ts period_end), so the notices
  // before it quote the terms it will charge; a failed payment is the current terms' charge.
  const renewalTerms = state.pendingTerms ?? state.terms;
  const common = {
    storeName: store.name,
    productName: subscription.productName,
    currency: subscription.currency,
    // The buyer's customer area, where they cancel, resume or change their card, unless the caller names another page.
    // A test subscription's buyer signs in to the test customer area (its mail stays in the development mailbox).
    manageUrl:
      input.manageUrl ??
      `${ctx.deps.config.publicUrl}/account/${store.subdomain}${subscription.livemode ? '' : '?mode=test'}`,
  };
  let content: SubscriptionMailContent;
  switch (kind) {
    case 'trial_ending':
      content = {
        ...common,
        kind,
        amountMinor: chargeOf(renewalTerms, state),
        cadence: renewalTerms.cadence,
        trialEnd: subscription.trialEnd ?? subscription.currentPeriodEnd,
      };
      break;
    case 'upcoming_renewal':
      content = {
        ...common,
        kind,
        amountMinor: chargeOf(renewalTerms, state),
        cadence: renewalTerms.cadence,
        renewsAt: subscription.currentPeriodEnd,
      };
      break;
    case 'payment_failed':
      if (!input.payUrl) throw new Error('subscription payment_failed mail: a payUrl is required');
      content = {
        ...common,
        kind,
        amountMinor: chargeOf(state.terms, state),
        cadence: state.terms.cadence,
        payUrl: input.payUrl,
        nextRetryAt: subscription.nextRetryAt ?? null,
      };
      break;
    case 'ended':
      content = {
        ...common,
        kind,
        amountMinor: amountOf(state.terms),
        cadence: state.terms.cadence,
        endedAt: subscription.endedAt ?? now,
        reason: subscription.cancellationReason ?? null,
      };
      break;
  }
  return recordMail(
    { em, deps },
    {
      to: subscription.customerEmail,
      ...subscriptionMail(content),
      dedupeKey: subscriptionMailDedupeKey(subscription, kind, now),
      // A test subscription's mail stays in the development mailbox (test mode: docs/architecture.md).
      livemode: subscription.livemode,
    },
  );
}
