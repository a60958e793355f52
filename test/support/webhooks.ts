/**
 * What the webhook service tests share (apps/server/src/modules/webhooks: endpoints.service.test.ts,
 * deliveries.service.test.ts, housekeeping.test.ts): a service call as a request makes it, an
 * endpoint created through the service, receivers on loopback closed after the file, and rows of
 * the outbox and of the delivery log written as the dispatcher would have left them. No dispatcher
 * runs in those files: what they queue is left for none to send.
 */
import type { TWebhookEvent } from '@svc/schemas';
import type { Orm } from '../../apps/server/src/db/orm.js';
import { ManualClock } from '../../apps/server/src/lib/clock.js';
import { newEventId, newId } from '../../apps/server/src/lib/ids.js';
import { EventSchema } from '../../apps/server/src/modules/events/events.entities.js';
import type { ServiceContext } from '../../apps/server/src/modules/request/context.js';
import { createWebhook } from '../../apps/server/src/modules/webhooks/endpoints.service.js';
import { WebhookDeliverySchema, WebhookSchema } from '../../apps/server/src/modules/webhooks/webhooks.entities.js';
import { serviceContext } from './in-process.js';
import { startWebhookReceiver, type ReceiverAnswer, type WebhookReceiver } from './webhook-receiver.js';

/**
 * Each test's own clock and deps: every clock 40 days after the previous test's, starting at
 * `start` (each file its own far-off era, so no two files' rows meet in one worker database), and
 * one application's worth of deps (its own APP_ENCRYPTION_KEY) on it.
 */
export function clockedSetups(orm: () => Orm, start: number) {
  let epoch = start;
  const freshClock = (): ManualClock => {
    epoch += 40 * 24 * 3_600_000;
    return new ManualClock(epoch);
  };
  const setup = (env: Record<string, string> = {}) => {
    const clock = freshClock();
    return { clock, base: serviceContext(orm(), clock, env) };
  };
  return { freshClock, setup };
}

/** A service call as a request makes it: the same deps, a fresh EntityManager. */
export const call = (base: ServiceContext): ServiceContext => ({ ...base, em: base.deps.orm.em.fork() });

/** An endpoint of the store, created through the service (order.created to an https URL unless told). */
export const createEndpoint = (
  base: ServiceContext,
  storeId: string,
  input: Partial<{ name: string; url: string; events: TWebhookEvent[] }> = {},
) =>
  createWebhook(call(base), {
    storeId,
    name: 'Orders',
    url: 'https://hooks.example.com/svc',
    events: ['order.created'],
    ...input,
  });

/** A status a row of the delivery log can have. */
export type LoggedStatus = 'success' | 'failed' | 'skipped' | 'queued' | 'pending';

/**
 * Rows of the outbox and of the delivery log on the test file's ORM (`orm()` is read at each
 * call, so it may be opened in `beforeAll`), and receivers closed with the file's `cleanups`.
 */
export function webhookTestData(orm: () => Orm, cleanups: Array<() => Promise<unknown>>) {
  const webhookRow = async (id: string) => {
    const [row] = await orm()
      .em.fork()
      .execute<Array<Record<string, unknown>>>('select * from webhook where id = ?', [id]);
    return row;
  };
  const countWebhooks = (storeId: string) => orm().em.fork().count(WebhookSchema, { store: storeId });
  const attemptsOf = (webhookId: string) =>
    orm()
      .em.fork()
      .find(WebhookDeliverySchema, { webhook: webhookId }, { orderBy: { eventId: 'asc', attempt: 'asc' } });

  async function receiver(answer?: (index: number) => ReceiverAnswer): Promise<WebhookReceiver> {
    const started = await startWebhookReceiver({ answer: answer && ((_hit, index) => answer(index)) });
    cleanups.push(() => started.close());
    return started;
  }

  /** An event of the store, written as already dispatched (the fan-out is the dispatcher's, not under test here). */
  async function insertEvent(
    storeId: string,
    type: string,
    createdAt: Date,
    dispatchedAt: Date | null = createdAt,
  ): Promise<string> {
    const id = newEventId();
    await orm()
      .em.fork()
      .insert(EventSchema, { id, store: storeId, type, payload: { order: { id: newId() } }, createdAt, dispatchedAt });
    return id;
  }

  /** A row of the delivery log, as the dispatcher would have left it. */
  async function logAttempt(
    webhookId: string,
    storeId: string,
    row: { status: LoggedStatus; createdAt: Date; event?: string; eventId?: string; attempt?: number },
  ): Promise<string> {
    const id = newId();
    await orm()
      .em.fork()
      .insert(WebhookDeliverySchema, {
        id,
        webhook: webhookId,
        storeId,
        eventId: row.eventId ?? newEventId(),
        event: row.event ?? 'order.created',
        attempt: row.attempt ?? 1,
        status: row.status,
        dueAt: row.createdAt,
        lockedUntil: null,
        responseCode: row.status === 'success' ? 200 : row.status === 'failed' ? 500 : null,
        createdAt: row.createdAt,
        updatedAt: row.createdAt,
      });
    return id;
  }

  return { webhookRow, countWebhooks, attemptsOf, receiver, insertEvent, logAttempt };
}
