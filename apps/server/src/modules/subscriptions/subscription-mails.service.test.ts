/**
 * The subscription mails against the real database, without HTTP: each kind is recorded from the
 * row as its move left it, in the move's transaction (a rollback takes it away), to the buyer,
 * once per occasion (its dedupe key names the subscription, the kind and the period or time it is
 * about), kept and never sent for a test subscription even with SMTP_URL, and not at all without
 * a buyer e-mail. Mail is kept here (no SMTP_URL), so keptMail reads what was recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { serviceContext } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { ManualClock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { OutboundEmailSchema } from '../mail/mail.entities.js';
import { keptMail } from '../mail/outbox.js';
import type { ServiceContext } from '../request/context.js';
import { inTransaction } from '../request/transaction.js';
import { RENEWAL_NOTICE_MS, TRIAL_NOTICE_MS, type MoveResult } from './subscription-machine.js';
import { recordSubscriptionMail, subscriptionMailDedupeKey } from './subscription-mails.service.js';
import { SubscriptionSchema, type Subscription } from './subscriptions.entities.js';
import { applyMove, newSubscriptionRow, type NewSubscription } from './subscriptions.service.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const START = Date.UTC(2027, 2, 1, 12, 0);
const DAY = 86_400_000;
const PAY = 'https://shop.example/subscriptions/pay?token=abc';
const MANAGE = 'https://shop.example/subscriptions/manage?token=def';
const unique = () => newId().slice(0, 12);

/** A fresh store named "Sub Mail Lab" and the fields of a monthly $9 subscription of it. */
async function storeAndTerms(overrides: Partial<NewSubscription> = {}): Promise<NewSubscription> {
  const store = await createStore(orm.em.fork(), { name: 'Sub Mail Lab' });
  return {
    storeId: store.id,
    livemode: true,
    productId: newId(),
    productName: 'Editor Pro',
    planId: newId(),
    interval: 'month',
    intervalCount: 1,
    unitPriceMinor: 900,
    quantity: 1,
    discountMinor: 0,
    couponId: null,
    currency: 'USD',
    customerEmail: `buyer-${unique()}@example.test`,
    paymentMethod: 'test',
    firstOrderId: newId(),
    ...overrides,
  };
}

/**
 * In one transaction: a new row of `terms`, the `moves` applied in order (each at its time), and
 * the last move's mail recorded with the row as the move left it (by the move itself, or, for a
 * failed payment, by the caller with its pay link, as the billing engine does).
 */
async function moveAndMail(
  ctx: ServiceContext,
  terms: NewSubscription,
  moves: (tx: ServiceContext, row: Subscription) => Promise<{ result: MoveResult; now: Date }>,
): Promise<{ row: Subscription; recorded: boolean; now: Date }> {
  return inTransaction(ctx, async (tx) => {
    const row = newSubscriptionRow(tx, terms, new Date(START));
    const { result, now } = await moves(tx, row);
    expect(result.mail).toBeDefined();
    // The move records its own mail (applyMove); a failed payment's comes with the caller's pay link.
    const recorded =
      result.mail === 'payment_failed'
        ? await recordSubscriptionMail(tx, {
            subscription: row,
            kind: result.mail,
            now,
            payUrl: PAY,
            manageUrl: MANAGE,
          })
        : (await tx.em.count(OutboundEmailSchema, {
            dedupeKey: subscriptionMailDedupeKey(row, result.mail!, now),
          })) === 1 && row.customerEmail !== '';
    await tx.em.flush();
    return { row, recorded, now };
  });
}

const mailsOf = (to: string) => orm.em.fork().find(OutboundEmailSchema, { to });
const keptTo = (ctx: ServiceContext, to: string) => keptMail({ em: orm.em.fork(), deps: ctx.deps }, { to });

/** Records `row`'s `kind` mail again in a transaction of its own (a retried move, a crash and retry). */
const recordAgain = (ctx: ServiceContext, row: Subscription, kind: 'trial_ending' | 'payment_failed', now: Date) =>
  inTransaction(ctx, async (tx) => {
    const again = await tx.em.findOneOrFail(SubscriptionSchema, { id: row.id });
    return recordSubscriptionMail(tx, { subscription: again, kind, now, payUrl: PAY });
  });

describe('recordSubscriptionMail', () => {
  it('trial_ending: to the buyer, about the trial’s end, once per trial however often it is recorded', async () => {
    const ctx = serviceContext(orm, new ManualClock(START));
    const terms = await storeAndTerms();
    const { row, recorded, now } = await moveAndMail(ctx, terms, async (tx, row) => {
      await applyMove(tx, row, 'start_trial', new Date(START), 14);
      const now = new Date(START + 14 * DAY - TRIAL_NOTICE_MS);
      return { result: await applyMove(tx, row, 'notice', now), now };
    });
    expect(recorded).toBe(true);
    const trialEnd = new Date(START + 14 * DAY);
    const [mail, ...more] = await keptTo(ctx, terms.customerEmail);
    expect(more).toEqual([]);
    expect(mail!.dedupeKey).toBe(`subscription:${row.id}:trial_ending:${trialEnd.toISOString()}`);
    expect(mail!.dedupeKey).toBe(subscriptionMailDedupeKey(row, 'trial_ending', now));
    expect(mail!.subject).toBe('Your Editor Pro trial ends on 15 March 2027 — Sub Mail Lab');
    expect(mail!.text).toContain('Your first payment of $9.00 / month is charged then');
    // The customer area's link, where the buyer manages the subscription.
    expect(mail!.text).toMatch(/\/account\/[a-z0-9-]+/);
    expect(mail!.html).toContain('Sub Mail Lab');

    // A retried notice (a day later, the same trial) records nothing more.
    expect(await recordAgain(ctx, row, 'trial_ending', new Date(now.getTime() + DAY))).toBe(false);
    expect(await mailsOf(terms.customerEmail)).toHaveLength(1);
  });

  it('upcoming_renewal: a yearly plan’s notice names the renewal day and what it charges (the pending change’s)', async () => {
    const ctx = serviceContext(orm, new ManualClock(START));
    const terms = await storeAndTerms({ interval: 'year', unitPriceMinor: 9900, quantity: 2 });
    const renewsAt = new Date(Date.UTC(2028, 2, 1, 12, 0));
    const { row } = await moveAndMail(ctx, terms, async (tx, row) => {
      await applyMove(tx, row, 'activate', new Date(START));
      // A change without proration waits for the renewal: the notice quotes it (3 seats).
      row.pendingTerms = {
        planId: row.planId,
        interval: 'year',
        intervalCount: 1,
        unitPriceMinor: 9900,
        quantity: 3,
        discountMinor: 0,
      };
      const now = new Date(renewsAt.getTime() - RENEWAL_NOTICE_MS);
      return { result: await applyMove(tx, row, 'notice', now), now };
    });
    const [mail] = await keptTo(ctx, terms.customerEmail);
    expect(mail!.dedupeKey).toBe(`subscription:${row.id}:upcoming_renewal:${renewsAt.toISOString()}`);
    expect(mail!.subject).toBe('Your Editor Pro subscription renews on 1 March 2028 — Sub Mail Lab');
    expect(mail!.text).toContain('renews on 1 March 2028 for $297.00.');
    expect(mail!.text).toContain('It is billed at $297.00 / year;');
  });

  it('payment_failed: the failed amount, the pay link and the next try, once per failure; a payUrl is required', async () => {
    const ctx = serviceContext(orm, new ManualClock(START));
    const terms = await storeAndTerms({ interval: 'month', intervalCount: 3, unitPriceMinor: 2500 });
    const renewal = new Date(Date.UTC(2027, 5, 1, 12, 0));
    const { row, now } = await moveAndMail(ctx, terms, async (tx, row) => {
      await applyMove(tx, row, 'activate', new Date(START));
      const { charge } = await applyMove(tx, row, 'period_end', renewal);
      return { result: await applyMove(tx, row, 'failed', renewal, charge!), now: renewal };
    });
    expect(row.status).toBe('past_due');
    const [mail] = await keptTo(ctx, terms.customerEmail);
    expect(mail!.dedupeKey).toBe(`subscription:${row.id}:payment_failed:${renewal.toISOString()}`);
    expect(mail!.subject).toBe('Payment failed for your Editor Pro subscription — Sub Mail Lab');
    expect(mail!.text).toContain(
      'The renewal payment of $25.00 for your Editor Pro subscription from Sub Mail Lab failed.',
    );
    expect(mail!.text).toContain(`Pay now or update your card:\n${PAY}`);
    expect(mail!.text).toContain('Otherwise we will try your card again on 2 June 2027.');

    expect(await recordAgain(ctx, row, 'payment_failed', new Date(now.getTime() + DAY))).toBe(false);
    expect(await mailsOf(terms.customerEmail)).toHaveLength(1);

    await expect(
      inTransaction(ctx, (tx) => recordSubscriptionMail(tx, { subscription: row, kind: 'payment_failed', now })),
    ).rejects.toThrow(/payUrl/);
    expect(await mailsOf(terms.customerEmail)).toHaveLength(1);
  });

  it('ended: the day it ended and why, for a cancel now and for dunning that ran out', async () => {
    const ctx = serviceContext(orm, new ManualClock(START));
    const canceledTerms = await storeAndTerms();
    const canceledAt = new Date(START + 10 * DAY);
    const { row: canceled } = await moveAndMail(ctx, canceledTerms, async (tx, row) => {
      await applyMove(tx, row, 'activate', new Date(START));
      return {
        result: await applyMove(tx, row, 'cancel', canceledAt, false, 'requested_by_customer'),
        now: canceledAt,
      };
    });
    const [byBuyer] = await keptTo(ctx, canceledTerms.customerEmail);
    expect(byBuyer!.dedupeKey).toBe(`subscription:${canceled.id}:ended:${canceledAt.toISOString()}`);
    expect(byBuyer!.subject).toBe('Your Editor Pro subscription has ended — Sub Mail Lab');
    expect(byBuyer!.text).toContain('ended on 11 March 2027 because it was canceled.');

    const unpaidTerms = await storeAndTerms();
    let at = new Date(Date.UTC(2027, 3, 1, 12, 0));
    const { row: unpaid } = await moveAndMail(ctx, unpaidTerms, async (tx, row) => {
      await applyMove(tx, row, 'activate', new Date(START));
      const { charge } = await applyMove(tx, row, 'period_end', at);
      let result = await applyMove(tx, row, 'failed', at, charge!);
      while (!result.mail || result.mail === 'payment_failed') {
        at = row.nextRetryAt!;
        result = await applyMove(tx, row, 'failed', at, charge!);
      }
      return { result, now: at };
    });
    expect(unpaid.status).toBe('canceled');
    const [byDunning] = await keptTo(ctx, unpaidTerms.customerEmail);
    expect(byDunning!.dedupeKey).toBe(`subscription:${unpaid.id}:ended:${at.toISOString()}`);
    expect(byDunning!.text).toContain('ended on 17 April 2027 because we could not collect payment.');
  });

  it('is kept, never sent, for a test subscription even with SMTP_URL', async () => {
    const ctx = serviceContext(orm, new ManualClock(START), { SMTP_URL: 'smtp://127.0.0.1:9' });
    expect(ctx.deps.config.smtpUrl).toBeTruthy();
    const terms = await storeAndTerms({ livemode: false });
    await moveAndMail({ ...ctx, livemode: false }, terms, async (tx, row) => {
      await applyMove(tx, row, 'activate', new Date(START));
      const now = new Date(START + DAY);
      return { result: await applyMove(tx, row, 'cancel', now, false, 'requested_by_merchant'), now };
    });
    const rows = await mailsOf(terms.customerEmail);
    expect(rows.map((row) => [row.status, row.dueAt])).toEqual([['kept', null]]);
  });

  it('records nothing without a buyer e-mail, and goes with a transaction that rolls back', async () => {
    const ctx = serviceContext(orm, new ManualClock(START));
    const anonymous = await storeAndTerms({ customerEmail: '' });
    const { row, recorded } = await moveAndMail(ctx, anonymous, async (tx, row) => {
      await applyMove(tx, row, 'activate', new Date(START));
      return {
        result: await applyMove(tx, row, 'cancel', new Date(START), false, 'requested_by_merchant'),
        now: new Date(START),
      };
    });
    expect(recorded).toBe(false);
    expect(await orm.em.fork().find(OutboundEmailSchema, { dedupeKey: { $like: `subscription:${row.id}:%` } })).toEqual(
      [],
    );

    const rollback = new Error('roll back the move');
    const other = await storeAndTerms();
    await expect(
      inTransaction(ctx, async (tx) => {
        const row = newSubscriptionRow(tx, other, new Date(START));
        await applyMove(tx, row, 'activate', new Date(START));
        await applyMove(tx, row, 'cancel', new Date(START), false, 'requested_by_merchant');
        // The cancel recorded its mail; recording it again adds nothing.
        expect(await recordSubscriptionMail(tx, { subscription: row, kind: 'ended', now: new Date(START) })).toBe(
          false,
        );
        expect(await tx.em.count(OutboundEmailSchema, { to: other.customerEmail })).toBe(1);
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    expect(await mailsOf(other.customerEmail)).toEqual([]);
  });
});
