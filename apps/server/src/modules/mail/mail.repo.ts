/**
 * The outbox's statements on `outbound_email`: the insert that a dedupe key makes a no-op the
 * second time, the sender's claim under a lease, what it records after an attempt, and pruning.
 * Every write after a claim is guarded by the claim's lease, so a sender that lost its lease
 * (it stalled past it and another took the mail over) changes nothing.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedRows } from '../../db/prepared.js';
import { OutboundEmailSchema, type MailStatus } from './mail.entities.js';

/** A mail row as the outbox writes it (text and html already sealed). */
export interface MailRow {
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  status: MailStatus;
  dueAt: Date | null;
  dedupeKey: string | null;
  createdAt: Date;
}

/**
 * Inserts the mail in `em`'s transaction (at once outside one); with a dedupe key already
 * recorded, inserts nothing. Returns whether it inserted.
 */
export async function insertMail(em: EntityManager, row: MailRow): Promise<boolean> {
  // Raw: ON CONFLICT DO NOTHING on the dedupe key (an ORM insert would fail the caller's transaction).
  // Prepared: every settlement records its receipt here.
  const inserted = await preparedRows<{ id: string }>(
    em,
    `insert into outbound_email (id, "to", subject, text, html, status, attempts, due_at, dedupe_key, created_at)
     values (?, ?, ?, ?, ?, ?, 0, ?, ?, ?)
     on conflict (dedupe_key) do nothing returning id`,
    [row.id, row.to, row.subject, row.text, row.html, row.status, row.dueAt, row.dedupeKey, row.createdAt],
  );
  return inserted.length === 1;
}

/** A mail a sender holds: what it sends, and the lease that guards what it records. */
export interface ClaimedMail {
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  /** This attempt's number (1 for the first). */
  attempt: number;
  lease: Date;
}

/**
 * Takes up to `limit` queued mails that are due and not under another sender's lease (a lease
 * past its time is a sender that died holding the mail: taken over), oldest due first, leases
 * them until `lease` and counts the attempt.
 */
export async function claimDueMail(
  em: EntityManager,
  opts: { now: Date; lease: Date; limit: number },
): Promise<ClaimedMail[]> {
  // Raw: FOR UPDATE SKIP LOCKED, so senders claiming at once take disjoint rows, and RETURNING what is sent.
  const rows = await em.execute<
    Array<{ id: string; to: string; subject: string; text: string; html: string | null; attempts: number }>
  >(
    `update outbound_email m set locked_until = ?, attempts = m.attempts + 1
     where m.id in (
       select id from outbound_email
       where status = 'queued' and due_at <= ? and (locked_until is null or locked_until <= ?)
       order by due_at limit ? for update skip locked
     )
     returning m.id, m."to", m.subject, m.text, m.html, m.attempts`,
    [opts.lease, opts.now, opts.now, opts.limit],
  );
  return rows.map((row) => ({
    id: row.id,
    to: row.to,
    subject: row.subject,
    text: row.text,
    html: row.html,
    attempt: row.attempts,
    lease: opts.lease,
  }));
}

/** The SMTP server took the mail. Returns false when the lease was lost meanwhile. */
export async function markSent(em: EntityManager, claimed: ClaimedMail, now: Date): Promise<boolean> {
  const updated = await em.nativeUpdate(
    OutboundEmailSchema,
    { id: claimed.id, status: 'queued', lockedUntil: claimed.lease },
    { status: 'sent', sentAt: now, dueAt: null, lockedUntil: null, lastError: null },
  );
  return updated === 1;
}

/**
 * The attempt failed: queued again for `nextAt`, or `failed` when there is no next attempt.
 * Returns false when the lease was lost meanwhile.
 */
export async function markAttemptFailed(
  em: EntityManager,
  claimed: ClaimedMail,
  error: string,
  nextAt: Date | null,
): Promise<boolean> {
  const updated = await em.nativeUpdate(
    OutboundEmailSchema,
    { id: claimed.id, status: 'queued', lockedUntil: claimed.lease },
    { status: nextAt ? 'queued' : 'failed', dueAt: nextAt, lockedUntil: null, lastError: error.slice(0, 500) },
  );
  return updated === 1;
}

/** Deletes up to `limit` sent or failed mails created before `cutoff`; kept and queued mail stays. Returns how many. */
export async function deleteFinishedMail(em: EntityManager, cutoff: Date, limit: number): Promise<number> {
  // Raw: a DELETE bounded by LIMIT (through a subquery), so a large backlog goes in short statements.
  const deleted: unknown[] = await em.execute(
    `delete from outbound_email where id in (
       select id from outbound_email where status in ('sent', 'failed') and created_at < ? limit ?
     ) returning id`,
    [cutoff, limit],
  );
  return deleted.length;
}
