/**
 * The events API: a store's events as its webhooks carry them, for a merchant reconciling what
 * its endpoint may have missed. Kept as long as the outbox keeps them (30 days, and never before
 * every delivery of the event has finished: webhooks' prune-events job).
 */
import type { TListEventsQuery, TStoredEvent } from '@svc/schemas';
import { cursorScope, decodeCursor, keysetPage } from '../../lib/cursor.js';
import { AppError } from '../../lib/errors.js';
import type { ServiceContext } from '../request/context.js';
import { EventSchema } from './events.entities.js';
import { selectEventPage } from './events.repo.js';

/**
 * The event as a delivery's body has it (webhooks/attempt.ts eventBody builds the same keys in the
 * same order). Typed as the event body its type names: the outbox checked the payload against that
 * type's schema when it wrote it, and the output schema (ZStoredEvent) checks it again.
 */
function toStoredEvent(row: {
  id: string;
  type: string;
  createdAt: Date;
  storeId: string;
  livemode: boolean;
  payload: Record<string, unknown>;
}): TStoredEvent {
  return {
    id: row.id,
    event: row.type,
    createdAt: row.createdAt.toISOString(),
    storeId: row.storeId,
    livemode: row.livemode,
    data: row.payload,
  } as TStoredEvent;
}

export async function listEvents(ctx: ServiceContext, input: TListEventsQuery) {
  const limit = input.limit ?? 50;
  const key = ctx.deps.config.encryptionKey;
  const filter = {
    storeId: input.storeId,
    livemode: ctx.livemode,
    type: input.type,
    from: input.from ? new Date(input.from) : undefined,
    to: input.to ? new Date(input.to) : undefined,
  };
  const scope = cursorScope('events', filter);
  const before = input.cursor ? decodeCursor(key, scope, input.cursor) : undefined;
  const rows = await selectEventPage(ctx.em, filter, before, limit + 1);
  const { page, hasMore, nextCursor } = keysetPage(key, scope, rows, limit, (row) => row.us);
  return {
    events: page.map((row) =>
      toStoredEvent({
        id: row.id,
        type: row.type,
        createdAt: new Date(row.created_at),
        storeId: row.store_id,
        livemode: row.livemode,
        payload: typeof row.payload === 'string' ? (JSON.parse(row.payload) as Record<string, unknown>) : row.payload,
      }),
    ),
    hasMore,
    nextCursor,
  };
}

/** One event of the store and mode; another store's or mode's (or a pruned one) is 404. */
export async function getEvent(
  ctx: ServiceContext,
  input: { storeId: string; eventId: string },
): Promise<TStoredEvent> {
  const event = await ctx.em.findOne(EventSchema, { id: input.eventId, store: input.storeId, livemode: ctx.livemode });
  if (!event) throw new AppError('not_found', 'No event with this id in this store.');
  return toStoredEvent({
    id: event.id,
    type: event.type,
    createdAt: event.createdAt,
    storeId: input.storeId,
    livemode: event.livemode,
    payload: event.payload,
  });
}
