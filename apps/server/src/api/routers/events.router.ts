/**
 * The events API for merchants under /merchant/v1 (Bearer key with event:read, capped by
 * manageSettings) and the dashboard (session with manageSettings), each operation declared once
 * for both (storeResource).
 */
import { ZEventIdInput, ZEventList, ZListEventsQuery, ZStoredEvent } from '@svc/schemas';
import { router, storeResource } from '../../trpc/procedures.js';
import { getEvent, listEvents } from '../../modules/events/events.service.js';

const MERCHANT = '/merchant/v1/stores/{storeId}/events';
const tags = ['merchant: events'];
const dashboard = { tags: ['dashboard: events'] };
const read = storeResource({ scope: 'event:read', permission: 'manageSettings' });

export const eventsRouter = router({
  list: read
    .meta({
      openapi: {
        method: 'GET',
        path: MERCHANT,
        tags,
        summary: "The store's events, newest first (filters `type`, `from`, `to`); kept 30 days",
      },
      dashboard,
      errors: [],
    })
    .input(ZListEventsQuery)
    .output(ZEventList)
    .query(({ ctx, input }) => listEvents(ctx, input)),
  get: read
    .meta({
      openapi: {
        method: 'GET',
        path: `${MERCHANT}/{eventId}`,
        tags,
        summary: 'One event, byte for byte the body its webhook deliveries carry',
      },
      dashboard,
      errors: ['not_found'],
    })
    .input(ZEventIdInput)
    .output(ZStoredEvent)
    .query(({ ctx, input }) => getEvent(ctx, input)),
});
