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
import { storeProcedure } from '../../trpc/guards.js';
import { publicProcedure, router } from '../../trpc/procedures.js';
import {
  addBuyerMessage,
  addStaffMessage,
  createTicket,
  getBuyerTicket,
  getStoreTicket,
  listTickets,
  updateTicketStatus,
} from './tickets.service.js';

const MINUTE = 60_000;
const buyerTags = ['buyer'];
const dashboard = ['dashboard'];
const buyerErrors = [400, 401, 403, 404, 500];

export const ticketsRouter = router({
  create: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/tickets',
        tags: buyerTags,
        summary: 'Open a support ticket about an order (checkout token, svc_checkout cookie or customer session)',
        protect: false,
        errorResponses: buyerErrors,
      },
      successStatus: 201,
      rateLimit: { name: 'tickets.create', max: 5, windowMs: MINUTE },
    })
    .input(ZCreateTicketInput)
    .output(ZTicket)
    .mutation(({ ctx, input }) => createTicket(ctx, input)),

  get: publicProcedure
    .meta({
      openapi: { method: 'GET', path: '/tickets/{ticketId}', tags: buyerTags, summary: 'A ticket and its messages, for the buyer', protect: false, errorResponses: [400, 401, 403, 404, 500] },
    })
    .input(ZBuyerTicketInput)
    .output(ZTicket)
    .query(({ ctx, input }) => getBuyerTicket(ctx, input)),

  reply: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/tickets/{ticketId}/messages', tags: buyerTags, summary: 'The buyer writes on a ticket; reopens it for staff', protect: false, errorResponses: buyerErrors },
      successStatus: 201,
      rateLimit: { name: 'tickets.reply', max: 20, windowMs: MINUTE },
    })
    .input(ZBuyerTicketReplyInput)
    .output(ZTicketMessage)
    .mutation(({ ctx, input }) => addBuyerMessage(ctx, input)),

  dashboardList: storeProcedure('viewOrders')
    .meta({ openapi: { method: 'GET', path: '/dashboard/stores/{storeId}/tickets', tags: dashboard, summary: "The store's tickets, newest activity first", protect: false }, auth: 'session' })
    .input(ZListTicketsQuery)
    .output(ZTicketList)
    .query(({ ctx, input }) => listTickets(ctx, input)),

  dashboardGet: storeProcedure('viewOrders')
    .meta({ openapi: { method: 'GET', path: '/dashboard/stores/{storeId}/tickets/{ticketId}', tags: dashboard, summary: 'A ticket and its messages', protect: false }, auth: 'session' })
    .input(ZStoreTicketInput)
    .output(ZTicket)
    .query(({ ctx, input }) => getStoreTicket(ctx, ctx.storeId, input.ticketId)),

  dashboardReply: storeProcedure('viewOrders')
    .meta({
      openapi: { method: 'POST', path: '/dashboard/stores/{storeId}/tickets/{ticketId}/messages', tags: dashboard, summary: 'Answer a ticket; e-mails the buyer', protect: false, errorResponses: [400, 401, 403, 404, 500] },
      auth: 'session',
      successStatus: 201,
    })
    .input(ZStaffTicketReplyInput)
    .output(ZTicketMessage)
    .mutation(({ ctx, input }) => addStaffMessage(ctx, ctx.user.id, { ...input, storeId: ctx.storeId })),

  dashboardUpdate: storeProcedure('viewOrders')
    .meta({ openapi: { method: 'PATCH', path: '/dashboard/stores/{storeId}/tickets/{ticketId}', tags: dashboard, summary: 'Reopen or close a ticket', protect: false }, auth: 'session' })
    .input(ZUpdateTicketInput)
    .output(ZTicket)
    .mutation(({ ctx, input }) => updateTicketStatus(ctx, { ...input, storeId: ctx.storeId })),
});
