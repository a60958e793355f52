import {
  ZBuyerTicketInput,
  ZBuyerTicketReplyInput,
  ZCreateTicketInput,
  ZListTicketsQuery,
  ZStaffTicketReplyInput,
  ZStoreTicketInput,
  ZTicket,
  ZTicketList,
  ZTicketMessage,
  ZUpdateTicketInput,
} from '@svc/schemas';
import type { TErrorCode } from '@svc/schemas';
import { router, storeProcedure, ticketBuyerProcedure } from '../../trpc/procedures.js';
import {
  addBuyerMessage,
  addStaffMessage,
  createTicket,
  getBuyerTicket,
  getStoreTicket,
  listTickets,
  updateTicketStatus,
} from '../../modules/tickets/tickets.service.js';

const MINUTE = 60_000;
const buyerTags = ['buyer'];
const dashboard = ['dashboard'];
/** A checkout token that opens no order (403), an unknown order or ticket (404). */
const buyerErrors: TErrorCode[] = ['not_found', 'store_forbidden'];

export const ticketsRouter = router({
  create: ticketBuyerProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/tickets',
        tags: buyerTags,
        summary: 'Open a support ticket about an order (checkout token, svc_checkout cookie or customer session)',
      },
      successStatus: 201,
      errors: buyerErrors,
      rateLimit: { name: 'tickets.create', max: 5, windowMs: MINUTE },
    })
    .input(ZCreateTicketInput)
    .output(ZTicket)
    .mutation(({ ctx, input }) => createTicket(ctx, input)),

  get: ticketBuyerProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/tickets/{ticketId}',
        tags: buyerTags,
        summary: 'A ticket and its messages, for the buyer',
      },
      errors: buyerErrors,
    })
    .input(ZBuyerTicketInput)
    .output(ZTicket)
    .query(({ ctx, input }) => getBuyerTicket(ctx, input)),

  addMessage: ticketBuyerProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/tickets/{ticketId}/messages',
        tags: buyerTags,
        summary: 'The buyer writes on a ticket; reopens it for staff',
      },
      successStatus: 201,
      errors: buyerErrors,
      rateLimit: { name: 'tickets.message', max: 20, windowMs: MINUTE },
    })
    .input(ZBuyerTicketReplyInput)
    .output(ZTicketMessage)
    .mutation(({ ctx, input }) => addBuyerMessage(ctx, input)),

  dashboardList: storeProcedure('viewOrders')
    .meta({
      openapi: {
        method: 'GET',
        path: '/dashboard/stores/{storeId}/tickets',
        tags: dashboard,
        summary: "The store's tickets, newest activity first",
      },
      errors: [],
    })
    .input(ZListTicketsQuery)
    .output(ZTicketList)
    .query(({ ctx, input }) => listTickets(ctx, input)),

  dashboardGet: storeProcedure('viewOrders')
    .meta({
      openapi: {
        method: 'GET',
        path: '/dashboard/stores/{storeId}/tickets/{ticketId}',
        tags: dashboard,
        summary: 'A ticket and its messages',
      },
      errors: ['not_found'],
    })
    .input(ZStoreTicketInput)
    .output(ZTicket)
    .query(({ ctx, input }) => getStoreTicket(ctx, ctx.storeId, input.ticketId)),

  dashboardAddMessage: storeProcedure('viewOrders')
    .meta({
      openapi: {
        method: 'POST',
        path: '/dashboard/stores/{storeId}/tickets/{ticketId}/messages',
        tags: dashboard,
        summary: 'Answer a ticket; e-mails the buyer',
      },
      successStatus: 201,
      errors: ['not_found'],
    })
    .input(ZStaffTicketReplyInput)
    .output(ZTicketMessage)
    .mutation(({ ctx, input }) => addStaffMessage(ctx, ctx.user.id, { ...input, storeId: ctx.storeId })),

  dashboardUpdate: storeProcedure('viewOrders')
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/dashboard/stores/{storeId}/tickets/{ticketId}',
        tags: dashboard,
        summary: 'Reopen or close a ticket',
      },
      errors: ['not_found'],
    })
    .input(ZUpdateTicketInput)
    .output(ZTicket)
    .mutation(({ ctx, input }) => updateTicketStatus(ctx, { ...input, storeId: ctx.storeId })),
});
