/**
 * The events API, built once for two surfaces: merchants under /merchant/v1 (Bearer key with
 * event:read, capped by manageSettings) and the dashboard (session with manageSettings).
 */
import { ZEventIdInput, ZEventList, ZListEventsQuery, ZStoredEvent } from '@svc/schemas';
import { merchantProcedure, router, storeProcedure, type GuardedBuilder } from '../../trpc/procedures.js';
import { getEvent, listEvents } from '../../modules/events/events.service.js';

function eventRoutes({ read, base, tags }: { read: GuardedBuilder; base: `/${string}`; tags: string[] }) {
  return {
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
  };
}

const merchant = eventRoutes({
  read: merchantProcedure('event:read'),
  base: '/merchant/v1/stores/{storeId}/events',
  tags: ['merchant: events'],
});
const dashboard = eventRoutes({
  read: storeProcedure('manageSettings'),
  base: '/dashboard/stores/{storeId}/events',
  tags: ['dashboard: events'],
});

export const eventsRouter = router({
  ...merchant,
  dashboardList: dashboard.list,
  dashboardGet: dashboard.get,
});
