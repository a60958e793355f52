/**
 * The mail senders' wake-up in this process: once the transaction that recorded a mail commits
 * (at once outside one), the senders of this process claim it. The same hub as the webhook
 * dispatchers' (events/wake.ts), a second instance; senders in other processes find the mail by
 * polling (MAIL_POLL_MS).
 */
import type { EntityManager } from '@mikro-orm/core';
import type { MikroORM as Orm } from '@mikro-orm/postgresql';
import { wakeHubs, type WakeHub } from '../../lib/wake-hub.js';

const hubs = wakeHubs();

/** The ORM's mail hub, registered with its EntityManager before any fork is made (db/orm.ts). */
export function mailWakeHubFor(orm: Orm): WakeHub {
  return hubs.hubFor(orm);
}

/** Wakes the senders when the transaction `em` is in commits (at once outside one). */
export function wakeMailSendersAfterCommit(em: EntityManager): void {
  hubs.hubOf(em)?.afterCommitOf(em);
}
