/**
 * The dispatchers' wake-up: once a commit that wrote outbox events is done, the dispatchers of
 * this process are woken at once and, through the publishers their Redis clients add, those of
 * other processes; polling covers a lost message. The outbox (outbox.ts) arranges it for every
 * event it writes, whatever the transaction's shape.
 */
import type { EntityManager } from '@mikro-orm/core';
// MikroORM's type, not db/orm's alias of it: db/orm registers this hub as it opens the ORM, and
// importing it back would close a circle.
import type { MikroORM as Orm } from '@mikro-orm/postgresql';
import { wakeHubs, type WakeHub } from '../../lib/wake-hub.js';

const hubs = wakeHubs();

/** The ORM's hub, registered with its EntityManager (forks made afterwards inherit the subscriber). */
export function wakeHubFor(orm: Orm): WakeHub {
  return hubs.hubFor(orm);
}

/** The hub of the ORM `em` belongs to, if one is registered. */
export function wakeHubOf(em: EntityManager): WakeHub | undefined {
  return hubs.hubOf(em);
}

/** Work is due now (a retry or replay queued attempts): wake the dispatchers. */
export function notifyDispatchers(orm: Orm): void {
  hubs.hubOf(orm)?.notify();
}

export function wakeChannel(redisKeyPrefix: string): string {
  return `${redisKeyPrefix}events`;
}
