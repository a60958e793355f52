/**
 * The mail outbox and its sender against the real database: a mail is recorded in the caller's
 * transaction (gone with its rollback), once per dedupe key, sealed; the sender sends what is due,
 * tries a failed send again on the schedule and gives up after the last attempt; a lease a dead
 * sender left is taken over once it runs out; two senders on two connections pools claiming at
 * once never send one mail twice; sent mail is pruned after the retention.
 *
 * Every test runs on its own ManualClock, each 40 days earlier than the one before and all long
 * before the real date, so mail other tests (or other files sharing this worker's database) left
 * queued is never due for the test that runs.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { serviceContext } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import type { AppDeps } from '../../deps.js';
import { ManualClock } from '../../lib/clock.js';
import type { MailTransport, OutgoingMail } from '../../lib/mailer.js';
import { OutboundEmailSchema } from './mail.entities.js';
import { claimDueMail } from './mail.repo.js';
import { MAIL_LEASE_MS, MAIL_MAX_ATTEMPTS, MAIL_RETRY_DELAYS_MS, MailSender } from './mail-sender.js';
import { serviceContext as jobContext } from '../request/context.js';
import { pruneFinishedMail, MAIL_RETENTION_MS } from './mail.service.js';
import { keptMail, recordMail } from './outbox.js';

const DAY = 24 * 3_600_000;
let orm: Orm;
let otherOrm: Orm;

beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 4 });
  otherOrm = await openOrm(workerDatabaseUrl(), { poolMax: 4 });
});
afterAll(async () => {
  await orm?.close();
  await otherOrm?.close();
});

let epoch = Date.UTC(2020, 0, 1);
function freshClock(): ManualClock {
  epoch -= 40 * DAY;
  return new ManualClock(epoch);
}

/** Deps with SMTP_URL set (mail is queued for a sender), on the test's clock. */
function sendingDeps(clock: ManualClock): AppDeps {
  return serviceContext(orm, clock, { SMTP_URL: 'smtp://127.0.0.1:9' }).deps;
}

const address = (prefix = 'to') => `${prefix}-${randomBytes(5).toString('hex')}@example.test`;

/** A transport that keeps what it was given; it fails while `failing` says so. */
class RecordingTransport implements MailTransport {
  readonly sent: OutgoingMail[] = [];
  failing = false;
  closed = false;
  constructor(private readonly delayMs = 0) {}
  async send(mail: OutgoingMail): Promise<void> {
    if (this.delayMs) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    if (this.failing) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ESOCKET' });
    this.sent.push(mail);
  }
  close(): void {
    this.closed = true;
  }
}

const rowsTo = (to: string) => orm.em.fork().find(OutboundEmailSchema, { to }, { orderBy: { createdAt: 'asc' } });

describe('recording mail', () => {
  it('writes in the caller’s transaction: rolled back with it, committed with it, its text sealed', async () => {
    const clock = freshClock();
    const deps = sendingDeps(clock);
    const lost = address('lost');
    await expect(
      orm.em.fork().transactional(async (em) => {
        await recordMail({ em, deps }, { to: lost, subject: 'Lost', text: 'never sent' });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await rowsTo(lost)).toEqual([]);

    const kept = address('kept');
    await orm.em
      .fork()
      .transactional((em) =>
        recordMail({ em, deps }, { to: kept, subject: 'Hello', text: 'secret link', html: '<p>secret link</p>' }),
      );
    const [row] = await rowsTo(kept);
    expect(row).toMatchObject({ status: 'queued', attempts: 0, dueAt: clock.now(), sentAt: null, lastError: null });
    expect(row!.text).not.toContain('secret link');
    expect(row!.html).not.toContain('secret link');
  });

  it('records a dedupe key once: the second mail with it is a no-op', async () => {
    const deps = sendingDeps(freshClock());
    const to = address('receipt');
    const key = `receipt:${randomBytes(6).toString('hex')}`;
    expect(
      await recordMail({ em: orm.em.fork(), deps }, { to, subject: 'Receipt', text: 'first', dedupeKey: key }),
    ).toBe(true);
    expect(
      await recordMail({ em: orm.em.fork(), deps }, { to, subject: 'Receipt', text: 'again', dedupeKey: key }),
    ).toBe(false);
    // Inside a transaction too, without failing it.
    await orm.em.fork().transactional(async (em) => {
      expect(await recordMail({ em, deps }, { to, subject: 'Receipt', text: 'third', dedupeKey: key })).toBe(false);
    });
    expect(await rowsTo(to)).toHaveLength(1);
    // Without a key, any number.
    await recordMail({ em: orm.em.fork(), deps }, { to, subject: 'Other', text: 'x' });
    await recordMail({ em: orm.em.fork(), deps }, { to, subject: 'Other', text: 'x' });
    expect(await rowsTo(to)).toHaveLength(3);
  });

  it('without SMTP_URL keeps the mail (never sent), readable by keptMail', async () => {
    const clock = freshClock();
    const { deps } = serviceContext(orm, clock);
    const to = address('dev');
    await recordMail({ em: orm.em.fork(), deps }, { to, subject: 'Dev', text: 'plain text', html: '<b>html</b>' });
    const [mail] = await keptMail({ em: orm.em.fork(), deps }, { to });
    expect(mail).toMatchObject({ to, subject: 'Dev', text: 'plain text', html: '<b>html</b>', status: 'kept' });
    const transport = new RecordingTransport();
    await new MailSender(deps, transport).runOnce();
    expect(transport.sent.filter((m) => m.to === to)).toEqual([]);
  });
});

describe('the mail sender', () => {
  it('sends due mail once, text and html opened, and records it sent', async () => {
    const clock = freshClock();
    const deps = sendingDeps(clock);
    const to = address();
    await recordMail({ em: orm.em.fork(), deps }, { to, subject: 'Hi', text: 'the text', html: '<p>the html</p>' });
    const transport = new RecordingTransport();
    const sender = new MailSender(deps, transport);
    expect(await sender.runOnce()).toEqual({ sent: 1, retried: 0, failed: 0 });
    expect(transport.sent).toEqual([{ to, subject: 'Hi', text: 'the text', html: '<p>the html</p>' }]);
    expect(await sender.runOnce()).toEqual({ sent: 0, retried: 0, failed: 0 });
    const [row] = await rowsTo(to);
    expect(row).toMatchObject({ status: 'sent', attempts: 1, sentAt: clock.now(), dueAt: null, lockedUntil: null });
  });

  it('tries a failed send again on the schedule, then gives up', async () => {
    const clock = freshClock();
    const deps = sendingDeps(clock);
    const to = address('retry');
    await recordMail({ em: orm.em.fork(), deps }, { to, subject: 'Retry', text: 'secret text' });
    const transport = new RecordingTransport();
    transport.failing = true;
    // No jitter: each retry exactly on the schedule.
    const sender = new MailSender(deps, transport, { random: () => 0.5 });

    expect(await sender.runOnce()).toEqual({ sent: 0, retried: 1, failed: 0 });
    let [row] = await rowsTo(to);
    expect(row).toMatchObject({ status: 'queued', attempts: 1, lockedUntil: null });
    expect(row!.dueAt).toEqual(new Date(clock.now().getTime() + MAIL_RETRY_DELAYS_MS[0]));
    expect(row!.lastError).toContain('ECONNREFUSED');
    expect(row!.lastError).not.toContain('secret text');

    // Not before it is due.
    clock.advance(MAIL_RETRY_DELAYS_MS[0] - 1);
    expect(await sender.runOnce()).toEqual({ sent: 0, retried: 0, failed: 0 });
    // The server answers again: the next attempt sends it.
    clock.advance(1);
    transport.failing = false;
    expect(await sender.runOnce()).toEqual({ sent: 1, retried: 0, failed: 0 });
    [row] = await rowsTo(to);
    expect(row).toMatchObject({ status: 'sent', attempts: 2, lastError: null });
    expect(transport.sent.map((m) => m.text)).toEqual(['secret text']);

    // A mail that never gets through is given up after the last attempt.
    const lost = address('lost');
    await recordMail({ em: orm.em.fork(), deps }, { to: lost, subject: 'Lost', text: 'x' });
    transport.failing = true;
    for (let attempt = 1; attempt <= MAIL_MAX_ATTEMPTS; attempt++) {
      const counts = await sender.runOnce();
      expect(counts, `attempt ${attempt}`).toEqual(
        attempt < MAIL_MAX_ATTEMPTS ? { sent: 0, retried: 1, failed: 0 } : { sent: 0, retried: 0, failed: 1 },
      );
      clock.advance(MAIL_RETRY_DELAYS_MS[attempt - 1] ?? DAY);
    }
    [row] = await rowsTo(lost);
    expect(row).toMatchObject({ status: 'failed', attempts: MAIL_MAX_ATTEMPTS, dueAt: null });
    expect(await sender.runOnce()).toEqual({ sent: 0, retried: 0, failed: 0 });
  });

  it('takes over a mail whose sender died holding it, once the lease runs out', async () => {
    const clock = freshClock();
    const deps = sendingDeps(clock);
    const to = address('orphan');
    await recordMail({ em: orm.em.fork(), deps }, { to, subject: 'Orphan', text: 'x' });
    // A sender claims it and dies before sending or recording anything.
    const now = clock.now();
    const [claimed] = await claimDueMail(orm.em.fork(), {
      now,
      lease: new Date(now.getTime() + MAIL_LEASE_MS),
      limit: 100,
    });
    expect(claimed).toMatchObject({ to, attempt: 1 });

    const transport = new RecordingTransport();
    const sender = new MailSender(deps, transport);
    clock.advance(MAIL_LEASE_MS - 1);
    expect(await sender.runOnce()).toEqual({ sent: 0, retried: 0, failed: 0 });
    clock.advance(1);
    expect(await sender.runOnce()).toEqual({ sent: 1, retried: 0, failed: 0 });
    const [row] = await rowsTo(to);
    expect(row).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('never sends one mail twice when two senders on two connection pools claim at once', async () => {
    const clock = freshClock();
    const deps = sendingDeps(clock);
    const batch = `race-${randomBytes(4).toString('hex')}`;
    const addresses = Array.from({ length: 60 }, (_, i) => `${batch}-${i}@example.test`);
    for (const to of addresses) await recordMail({ em: orm.em.fork(), deps }, { to, subject: 'Race', text: to });

    // Each send takes a moment, so the two senders' claims overlap.
    const first = new RecordingTransport(5);
    const second = new RecordingTransport(5);
    const [a, b] = await Promise.all([
      new MailSender(deps, first).runOnce(),
      // The same application (its key), another process's pool.
      new MailSender({ ...deps, orm: otherOrm }, second).runOnce(),
    ]);
    const sent = [...first.sent, ...second.sent].map((mail) => mail.to).filter((to) => to.startsWith(batch));
    expect(sent.sort()).toEqual([...addresses].sort());
    expect(a.sent + b.sent).toBe(addresses.length);
    // Both took part.
    expect(first.sent.length).toBeGreaterThan(0);
    expect(second.sent.length).toBeGreaterThan(0);
    const rows = await orm.em.fork().find(OutboundEmailSchema, { to: { $in: addresses } });
    expect(rows.every((row) => row.status === 'sent' && row.attempts === 1)).toBe(true);
  });

  it('stops cleanly: waits for the pass in flight, closes the transport', async () => {
    const clock = freshClock();
    const deps = sendingDeps(clock);
    const to = address('stop');
    const transport = new RecordingTransport(50);
    const sender = new MailSender(deps, transport, { pollMs: 60_000 });
    sender.start();
    // Woken by the commit, not by polling (the poll interval is a minute).
    await recordMail({ em: orm.em.fork(), deps }, { to, subject: 'Stop', text: 'x' });
    await expect.poll(() => transport.sent.some((mail) => mail.to === to), { timeout: 5_000 }).toBe(true);
    await sender.stop();
    expect(transport.closed).toBe(true);
    await expect.poll(async () => (await rowsTo(to))[0]?.status).toBe('sent');
  });
});

describe('pruning', () => {
  it('deletes sent and failed mail past the retention; kept and queued mail stays', async () => {
    const clock = freshClock();
    const deps = sendingDeps(clock);
    const { deps: keeping } = serviceContext(orm, clock);
    const sentTo = address('sent');
    const queuedTo = address('queued');
    const keptTo = address('kept');
    await recordMail({ em: orm.em.fork(), deps }, { to: sentTo, subject: 's', text: 'x' });
    await new MailSender(deps, new RecordingTransport()).runOnce();
    const transport = new RecordingTransport();
    transport.failing = true;
    await recordMail({ em: orm.em.fork(), deps }, { to: queuedTo, subject: 'q', text: 'x' });
    await new MailSender(deps, transport).runOnce();
    await recordMail({ em: orm.em.fork(), deps: keeping }, { to: keptTo, subject: 'k', text: 'x' });

    clock.advance(MAIL_RETENTION_MS - 1);
    await pruneFinishedMail(jobContext(deps));
    expect(await rowsTo(sentTo)).toHaveLength(1);
    clock.advance(2);
    expect(await pruneFinishedMail(jobContext(deps))).toBeGreaterThanOrEqual(1);
    expect(await rowsTo(sentTo)).toEqual([]);
    expect(await rowsTo(queuedTo)).toHaveLength(1);
    expect(await rowsTo(keptTo)).toHaveLength(1);
  });
});
