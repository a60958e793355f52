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
import { WakeHub } from '../../lib/wake-hub.js';

/** By the ORM's configuration, which every fork of its EntityManager shares. */
const hubs = new WeakMap<object, WakeHub>();

/** The ORM's hub, registered with its EntityManager (forks made afterwards inherit the subscriber). */
export function wakeHubFor(orm: Orm): WakeHub {
  let hub = hubs.get(orm.config);
  if (!hub) {
    hub = new WakeHub();
    hubs.set(orm.config, hub);
    orm.em.getEventManager().registerSubscriber(hub);
  }
  return hub;
}

/** The hub of the ORM `em` belongs to, if one is registered. */
export function wakeHubOf(em: EntityManager): WakeHub | undefined {
  return hubs.get(em.config);
}

/** Work is due now (a retry or replay queued attempts): wake the dispatchers. */
export function notifyDispatchers(orm: Orm): void {
  hubs.get(orm.config)?.notify();
}

export function wakeChannel(redisKeyPrefix: string): string {
  return `${redisKeyPrefix}events`;
}
