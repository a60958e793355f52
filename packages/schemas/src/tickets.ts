/** Support tickets: a buyer and the store's staff writing about one order. */
import { z } from 'zod';
import { ZBuyerToken, ZCount, ZId, ZPlainText, ZTimestamp, ZLivemode } from './common.js';
import { queryInt } from './query.js';

export const TICKET_STATUSES = ['open', 'answered', 'closed'] as const;
export const ZTicketStatus = z.enum(TICKET_STATUSES);
export type TTicketStatus = z.infer<typeof ZTicketStatus>;

export const TICKET_AUTHORS = ['buyer', 'staff'] as const;
export const ZTicketAuthor = z.enum(TICKET_AUTHORS);
export type TTicketAuthor = z.infer<typeof ZTicketAuthor>;

/** A message's text: plain text (newlines and tabs allowed), not blank. */
export const ZTicketMessageText = ZPlainText(5000).trim().min(1);

/** One line of plain text: no control characters at all, since it becomes an e-mail subject. */
export const ZTicketSubject = ZPlainText(200)
  .trim()
  .min(1)
  .refine((value) => !/[\n\r\t]/.test(value), 'the subject is one line');

/** Who wrote it, never which staff member or from where. */
export const ZTicketMessage = z.object({
  id: z.string(),
  author: ZTicketAuthor,
  body: z.string(),
  createdAt: ZTimestamp,
});
export type TTicketMessage = z.infer<typeof ZTicketMessage>;

const ticketFields = {
  id: z.string(),
  storeId: z.string(),
  livemode: ZLivemode,
  /** The order's database id. */
  orderId: z.string(),
  /** The order's public reference, `ORD-<n>`. */
  orderNumber: z.string(),
  subject: z.string(),
  status: ZTicketStatus,
  createdAt: ZTimestamp,
  updatedAt: ZTimestamp,
};

/** A ticket with its messages, oldest first: the same view for the buyer and the staff. */
export const ZTicket = z.object({ ...ticketFields, messages: z.array(ZTicketMessage) });
export type TTicket = z.infer<typeof ZTicket>;

/** A ticket in the dashboard list, with the buyer who opened it (the order's e-mail). */
export const ZTicketSummary = z.object({
  ...ticketFields,
  customerEmail: z.string().nullable().meta({ description: "The order's buyer e-mail; null when the order has none" }),
  messageCount: ZCount,
});
export type TTicketSummary = z.infer<typeof ZTicketSummary>;

/** `POST /api/tickets`: the checkout token in the body, the `svc_checkout` cookie, or a customer session. */
export const ZCreateTicketInput = z.strictObject({
  orderId: ZId,
  token: ZBuyerToken.optional(),
  subject: ZTicketSubject,
  message: ZTicketMessageText,
});
export type TCreateTicketInput = z.infer<typeof ZCreateTicketInput>;

/** `GET /api/tickets/{ticketId}`. */
export const ZBuyerTicketInput = z.strictObject({ ticketId: ZId, token: ZBuyerToken.optional() });
export type TBuyerTicketInput = z.infer<typeof ZBuyerTicketInput>;

/** `POST /api/tickets/{ticketId}/messages`. */
export const ZBuyerTicketReplyInput = z.strictObject({
  ticketId: ZId,
  token: ZBuyerToken.optional(),
  message: ZTicketMessageText,
});
export type TBuyerTicketReplyInput = z.infer<typeof ZBuyerTicketReplyInput>;

/** `GET /api/dashboard/stores/{storeId}/tickets`: newest activity first. */
export const ZListTicketsQuery = z.strictObject({
  storeId: ZId,
  status: ZTicketStatus.optional(),
  limit: queryInt(z.number().int().min(1).max(100)).optional(),
  cursor: z.string().min(1).max(200).optional(),
});
export type TListTicketsQuery = z.infer<typeof ZListTicketsQuery>;

export const ZTicketList = z.object({
  tickets: z.array(ZTicketSummary),
  hasMore: z.boolean(),
  nextCursor: z.string().nullable(),
});
export type TTicketList = z.infer<typeof ZTicketList>;

export const ZStoreTicketInput = z.strictObject({ storeId: ZId, ticketId: ZId });

export const ZStaffTicketReplyInput = z.strictObject({ storeId: ZId, ticketId: ZId, message: ZTicketMessageText });
export type TStaffTicketReplyInput = z.infer<typeof ZStaffTicketReplyInput>;

/** Staff reopen or close a ticket; `answered` follows from a reply. */
export const ZUpdateTicketInput = z.strictObject({ storeId: ZId, ticketId: ZId, status: z.enum(['open', 'closed']) });
export type TUpdateTicketInput = z.infer<typeof ZUpdateTicketInput>;
