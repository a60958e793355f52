/** The events API for merchants (/merchant/v1, Bearer key with event:read, capped by manageSettings). */
import { ZEventIdInput, ZEventList, ZListEventsQuery, ZStoredEvent } from '@svc/schemas';
import { merchantProcedure, router } from '../../trpc/procedures.js';
import { getEvent, listEvents } from './events.service.js';

const read = merchantProcedure('event:read');
const base = '/merchant/v1/stores/{storeId}/events';
const tags = ['merchant: events'];

export const eventsRouter = router({
  list: read
    .meta({
      openapi: {
        method: 'GET',
        path: base,
        tags,
        summary: "The store's events, newest first (filters `type`, `from`, `to`); kept 30 days",
      },
      errors: [],
    })
    .input(ZListEventsQuery)
    .output(ZEventList)
    .query(({ ctx, input }) => listEvents(ctx, input)),
  get: read
    .meta({
      openapi: {
        method: 'GET',
        path: `${base}/{eventId}`,
        tags,
        summary: 'One event, byte for byte the body its webhook deliveries carry',
      },
      errors: ['not_found'],
    })
    .input(ZEventIdInput)
    .output(ZStoredEvent)
    .query(({ ctx, input }) => getEvent(ctx, input)),
});
