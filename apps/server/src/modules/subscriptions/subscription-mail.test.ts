/**
 * What the subscription mails say (subscription-mail.ts), from plain data: each names the store
 * and the product, the day in words (UTC), the amount in the subscription's currency and the
 * interval in words; the pay link is in the failed-payment mail; the seller's text is escaped in
 * the HTML and the subject stays on one line.
 */
import { describe, expect, it } from 'vitest';
import { formatDay, intervalWords, subscriptionMail, type SubscriptionMailContent } from './subscription-mail.js';

const common = {
  storeName: 'Pixel Forge',
  productName: 'Editor Pro',
  currency: 'USD',
  amountMinor: 900,
  cadence: { interval: 'month', intervalCount: 1 },
} as const;
const MARCH_12 = new Date(Date.UTC(2027, 2, 12, 23, 30));
const PAY = 'https://shop.example/subscriptions/s1/pay?token=abc&x=1';
const MANAGE = 'https://shop.example/subscriptions/s1?token=def';

describe('subscriptionMail', () => {
  it('trial_ending: the day the trial ends, the first charge per interval, and how to cancel', () => {
    const mail = subscriptionMail({ ...common, kind: 'trial_ending', trialEnd: MARCH_12, manageUrl: MANAGE });
    expect(mail.subject).toBe('Your Editor Pro trial ends on 12 March 2027 — Pixel Forge');
    expect(mail.text).toBe(
      [
        'Your free trial of Editor Pro from Pixel Forge ends on 12 March 2027.',
        '',
        'Your first payment of $9.00 / month is charged then, and every month after that.',
        '',
        'To cancel before then, and pay nothing:',
        MANAGE,
      ].join('\n'),
    );
    expect(mail.html).toContain(`href="${MANAGE}"`);
    expect(mail.html).toContain(
      '<h1 style="margin:0 0 16px;font-size:22px;">Your Editor Pro trial ends on 12 March 2027</h1>',
    );

    const without = subscriptionMail({ ...common, kind: 'trial_ending', trialEnd: MARCH_12 });
    expect(without.text).toContain('To cancel before then, and pay nothing, contact Pixel Forge.');
    expect(without.html).not.toContain('href=');
  });

  it('upcoming_renewal: the day it renews and what it charges, in the currency and its places', () => {
    const mail = subscriptionMail({
      ...common,
      kind: 'upcoming_renewal',
      renewsAt: MARCH_12,
      currency: 'JPY',
      amountMinor: 12000,
      cadence: { interval: 'year', intervalCount: 1 },
    });
    expect(mail.subject).toBe('Your Editor Pro subscription renews on 12 March 2027 — Pixel Forge');
    expect(mail.text).toBe(
      [
        'Your Editor Pro subscription from Pixel Forge renews on 12 March 2027 for ¥12,000.',
        '',
        'It is billed at ¥12,000 / year; nothing needs doing to keep it.',
      ].join('\n'),
    );
    const sixMonths = subscriptionMail({
      ...common,
      kind: 'upcoming_renewal',
      renewsAt: MARCH_12,
      cadence: { interval: 'month', intervalCount: 6 },
      manageUrl: MANAGE,
    });
    expect(sixMonths.text).toContain('It is billed at $9.00 / 6 months;');
    expect(sixMonths.text).toContain(`Manage or cancel your subscription:\n${MANAGE}`);
  });

  it('payment_failed: the amount that failed, access continues, the pay link and the next try', () => {
    const mail = subscriptionMail({
      ...common,
      kind: 'payment_failed',
      amountMinor: 2700,
      cadence: { interval: 'month', intervalCount: 3 },
      payUrl: PAY,
      nextRetryAt: new Date(Date.UTC(2027, 2, 13, 12, 0)),
      manageUrl: MANAGE,
    });
    expect(mail.subject).toBe('Payment failed for your Editor Pro subscription — Pixel Forge');
    expect(mail.text).toBe(
      [
        'The renewal payment of $27.00 for your Editor Pro subscription from Pixel Forge failed.',
        '',
        'Your access continues for now.',
        '',
        'Pay now or update your card:',
        PAY,
        '',
        'Otherwise we will try your card again on 13 March 2027.',
        '',
        'Manage or cancel your subscription:',
        MANAGE,
      ].join('\n'),
    );
    expect(mail.html).toContain('href="https://shop.example/subscriptions/s1/pay?token=abc&amp;x=1"');
    expect(mail.html).toContain('>Pay now</a>');

    const last = subscriptionMail({ ...common, kind: 'payment_failed', payUrl: PAY, nextRetryAt: null });
    expect(last.text).toContain('We will not try your card again: without a payment the subscription ends.');
  });

  it('ended: the day it ended and the reason in words', () => {
    const unpaid = subscriptionMail({ ...common, kind: 'ended', endedAt: MARCH_12, reason: 'payment_failed' });
    expect(unpaid.subject).toBe('Your Editor Pro subscription has ended — Pixel Forge');
    expect(unpaid.text).toBe(
      [
        'Your Editor Pro subscription from Pixel Forge ended on 12 March 2027 because we could not collect payment.',
        '',
        'You will not be charged for it again.',
      ].join('\n'),
    );
    for (const reason of ['requested_by_customer', 'requested_by_merchant'] as const)
      expect(subscriptionMail({ ...common, kind: 'ended', endedAt: MARCH_12, reason }).text).toContain(
        'ended on 12 March 2027 because it was canceled.',
      );
    expect(subscriptionMail({ ...common, kind: 'ended', endedAt: MARCH_12, reason: null }).text).toContain(
      'ended on 12 March 2027.',
    );
  });

  it('escapes the store’s and the product’s text in the HTML, and keeps the subject on one line', () => {
    const hostile = {
      ...common,
      storeName: `Tom & Jerry's\r\n<b>Shop</b>`,
      productName: '<script>alert(1)</script> "Pro"',
      manageUrl: 'https://shop.example/s?a=1&b="2"',
    };
    const kinds: SubscriptionMailContent[] = [
      { ...hostile, kind: 'trial_ending', trialEnd: MARCH_12 },
      { ...hostile, kind: 'upcoming_renewal', renewsAt: MARCH_12 },
      { ...hostile, kind: 'payment_failed', payUrl: PAY, nextRetryAt: MARCH_12 },
      { ...hostile, kind: 'ended', endedAt: MARCH_12, reason: 'requested_by_customer' },
    ];
    for (const content of kinds) {
      const mail = subscriptionMail(content);
      expect(mail.subject, content.kind).not.toMatch(/[\r\n]/);
      expect(mail.subject, content.kind).toContain(`<script>alert(1)</script> "Pro"`);
      expect(mail.subject, content.kind).toContain(`Tom & Jerry's <b>Shop</b>`);
      expect(mail.html, content.kind).not.toMatch(/<script|<b>/);
      expect(mail.html, content.kind).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &quot;Pro&quot;');
      expect(mail.html, content.kind).toContain('Tom &amp; Jerry&#39;s &lt;b&gt;Shop&lt;/b&gt;');
      // The text is text: as written.
      expect(mail.text, content.kind).toContain('<script>alert(1)</script> "Pro"');
      // Nothing fetched: no images, stylesheets or scripts.
      expect(mail.html, content.kind).not.toMatch(/<img|<link|<style|<iframe|url\(|src=/i);
    }
    expect(subscriptionMail(kinds[0]!).html).toContain('href="https://shop.example/s?a=1&amp;b=&quot;2&quot;"');
  });

  it('writes days in UTC and intervals in words', () => {
    expect(formatDay(new Date(Date.UTC(2027, 0, 1, 0, 30)))).toBe('1 January 2027');
    expect(formatDay(new Date(Date.UTC(2026, 11, 31, 23, 59)))).toBe('31 December 2026');
    expect(intervalWords({ interval: 'month', intervalCount: 1 })).toBe('month');
    expect(intervalWords({ interval: 'month', intervalCount: 3 })).toBe('3 months');
    expect(intervalWords({ interval: 'year', intervalCount: 1 })).toBe('year');
    expect(intervalWords({ interval: 'week', intervalCount: 2 })).toBe('2 weeks');
  });
});
