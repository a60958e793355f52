/**
 * Support tickets. A buyer opens one about an order, with the order's checkout token (in the
 * body or the `svc_checkout` cookie) or a customer session of the order's store and e-mail;
 * staff holding `viewOrders` list, read and answer them. Each message is e-mailed to the other
 * side: buyer messages to the store's members who may view orders, staff answers to the
 * order's e-mail. No view or e-mail ever carries the checkout token, the buyer's IP or a
 * staff member's identity.
 */
import type {
  TCreateTicketInput,
  TListTicketsQuery,
  TTicket,
  TTicketList,
  TTicketMessage,
  TTicketStatus,
  TTicketSummary,
} from '@svc/schemas';
import { cursorScope, decodeCursor, keysetPage } from '../../lib/cursor.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { Context, ServiceContext } from '../request/context.js';
import { checkoutTokenFor } from '../orders/checkout-cookie.js';
import { orderForToken } from '../orders/order-lookup.js';
import { authenticateCustomer } from '../customers/customer-session.js';
import { recordMail } from '../mail/outbox.js';
import { OrderSchema, type Order } from '../orders/orders.entities.js';
import { publicOrderNumber } from '../orders/order-views.js';
import { hasPermission } from '../stores/membership.js';
import { StoreMemberSchema, StoreSchema } from '../stores/stores.entities.js';
import { TicketMessageSchema, TicketSchema, type Ticket, type TicketMessage } from './tickets.entities.js';
import { selectTicketPage, type TicketRow } from './tickets.repo.js';
import { iso } from '../../lib/timestamps.js';

export const DEFAULT_TICKET_PAGE = 50;
const TICKET_NOT_FOUND = 'Ticket not found.';
const NO_CREDENTIAL = 'Open the order with its checkout link or sign in to the store first.';

// ---------------------------------------------------------------------------------------------
// Views

function toMessageView(message: TicketMessage): TTicketMessage {
  return { id: message.id, author: message.author, body: message.body, createdAt: message.createdAt.toISOString() };
}

function toTicketView(ticket: Ticket, order: Order, messages: TicketMessage[]): TTicket {
  return {
    id: ticket.id,
    storeId: ticket.store.id,
    livemode: ticket.livemode,
    orderId: order.id,
    orderNumber: publicOrderNumber(order.number),
    subject: ticket.subject,
    status: ticket.status,
    createdAt: ticket.createdAt.toISOString(),
    updatedAt: ticket.updatedAt.toISOString(),
    messages: messages.map(toMessageView),
  };
}

async function ticketView(ctx: ServiceContext, ticket: Ticket, order: Order): Promise<TTicket> {
  const messages = await ctx.em.find(
    TicketMessageSchema,
    { ticket: ticket.id },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return toTicketView(ticket, order, messages);
}

// ---------------------------------------------------------------------------------------------
// Buyer access

/** A buyer's request as far as tickets read it: the credentials it presents. */
type BuyerRequest = ServiceContext & Pick<Context, 'caller'>;

/** Whether the request carries anything that could open some order. */
function hasBuyerCredential(ctx: BuyerRequest, token: string | undefined): boolean {
  const { credentials } = ctx.caller;
  return token !== undefined || !!credentials.checkout || !!credentials.customerToken;
}

/**
 * The order the buyer may write about, by the first credential present: the token in the
 * input, the `svc_checkout` cookie for this order, then the customer session. A wrong token
 * is 403 and an unknown order 404 (as at checkout); a customer sees only orders of their
 * store placed with their e-mail (404 for any other); nothing at all is 401.
 */
export async function buyerTicketAccess(ctx: BuyerRequest, orderId: string, token?: string): Promise<Order> {
  const checkoutToken = token ?? checkoutTokenFor(ctx.caller.credentials.checkout, orderId);
  if (checkoutToken !== undefined) return orderForToken(ctx, orderId, checkoutToken);
  if (!ctx.caller.credentials.customerToken) throw new AppError('unauthorized', NO_CREDENTIAL);
  const customer = await authenticateCustomer(ctx);
  const order = await ctx.em.findOne(OrderSchema, {
    id: orderId,
    store: customer.store.id,
    customerEmail: customer.email,
  });
  if (!order) throw new AppError('not_found', 'Order not found.');
  return order;
}

/** A ticket the buyer may open: its order's credential, as for creating one. */
async function buyerTicket(
  ctx: BuyerRequest,
  ticketId: string,
  token: string | undefined,
): Promise<{ ticket: Ticket; order: Order }> {
  // Without any credential the answer is 401 whether or not the ticket exists.
  if (!hasBuyerCredential(ctx, token)) throw new AppError('unauthorized', NO_CREDENTIAL);
  const ticket = await ctx.em.findOne(TicketSchema, { id: ticketId });
  if (!ticket) throw new AppError('not_found', TICKET_NOT_FOUND);
  try {
    return { ticket, order: await buyerTicketAccess(ctx, ticket.order.id, token) };
  } catch (error) {
    // A customer whose order it is not learns nothing more than about a ticket that does not exist.
    if (error instanceof AppError && error.appCode === 'not_found') throw new AppError('not_found', TICKET_NOT_FOUND);
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// E-mail

async function sendQuietly(
  ctx: ServiceContext,
  mail: { to: string; subject: string; text: string },
  ticket: Pick<Ticket, 'id' | 'livemode'>,
): Promise<void> {
  const ticketId = ticket.id;
  try {
    // A test order's tickets mail nobody: kept for the development mailbox (test mode: docs/architecture.md).
    await recordMail(ctx, { ...mail, livemode: ticket.livemode });
  } catch (error) {
    // The message is saved and shown on both sides; a notification not recorded must not fail the request.
    ctx.deps.log.error({ err: error, ticketId }, 'ticket e-mail failed');
  }
}

/** Addresses of the store's members who may view orders (the owner always). */
async function staffAddresses(ctx: ServiceContext, storeId: string): Promise<string[]> {
  const members = await ctx.em.find(
    StoreMemberSchema,
    { store: storeId },
    { populate: ['user'], orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return [
    ...new Set(
      members.filter((member) => hasPermission(member, 'viewOrders')).map((member) => member.user.getEntity().email),
    ),
  ];
}

async function storeName(ctx: ServiceContext, storeId: string): Promise<string> {
  return (await ctx.em.findOneOrFail(StoreSchema, { id: storeId })).name;
}

/** One e-mail per member, so no member learns another's address. */
async function notifyStaff(
  ctx: ServiceContext,
  ticket: Ticket,
  order: Order,
  body: string,
  opened: boolean,
): Promise<void> {
  const reference = publicOrderNumber(order.number);
  const name = await storeName(ctx, ticket.store.id);
  const subject = opened
    ? `[${name}] New ticket on ${reference}: ${ticket.subject}`
    : `[${name}] Buyer replied on ${reference}: ${ticket.subject}`;
  const text = [
    opened
      ? `The buyer of order ${reference} opened a ticket.`
      : `The buyer of order ${reference} replied to a ticket.`,
    `Subject: ${ticket.subject}`,
    '',
    body,
    '',
    'Answer it from the Tickets page of your dashboard.',
  ].join('\n');
  for (const to of await staffAddresses(ctx, ticket.store.id)) await sendQuietly(ctx, { to, subject, text }, ticket);
}

async function notifyBuyer(ctx: ServiceContext, ticket: Ticket, order: Order, body: string): Promise<void> {
  if (!order.customerEmail) return;
  const reference = publicOrderNumber(order.number);
  const name = await storeName(ctx, ticket.store.id);
  const text = [
    `${name} answered your ticket about order ${reference}.`,
    `Subject: ${ticket.subject}`,
    '',
    body,
    '',
    'Reply from your order page or your customer account.',
  ].join('\n');
  await sendQuietly(ctx, { to: order.customerEmail, subject: `Re: ${ticket.subject} (${reference})`, text }, ticket);
}

// ---------------------------------------------------------------------------------------------
// Buyer

export async function createTicket(ctx: BuyerRequest, input: TCreateTicketInput): Promise<TTicket> {
  const order = await buyerTicketAccess(ctx, input.orderId, input.token);
  const now = ctx.clock.now();
  const ticket = ctx.em.create(TicketSchema, {
    id: newId(),
    store: order.store.id,
    // A ticket, and its messages, are of its order's mode.
    livemode: order.livemode,
    order: order.id,
    subject: input.subject,
    status: 'open',
    createdAt: now,
    updatedAt: now,
  });
  const message = ctx.em.create(TicketMessageSchema, {
    id: newId(),
    ticket,
    livemode: ticket.livemode,
    author: 'buyer',
    staffUser: null,
    body: input.message,
    createdAt: now,
  });
  await ctx.em.flush();
  await notifyStaff(ctx, ticket, order, input.message, true);
  return toTicketView(ticket, order, [message]);
}

export async function getBuyerTicket(
  ctx: BuyerRequest,
  input: { ticketId: string; token?: string | undefined },
): Promise<TTicket> {
  const { ticket, order } = await buyerTicket(ctx, input.ticketId, input.token);
  return ticketView(ctx, ticket, order);
}

/** A buyer message (re)opens the ticket for staff. */
export async function addBuyerMessage(
  ctx: BuyerRequest,
  input: { ticketId: string; token?: string | undefined; message: string },
): Promise<TTicketMessage> {
  const { ticket, order } = await buyerTicket(ctx, input.ticketId, input.token);
  const message = await addMessage(ctx, ticket, {
    author: 'buyer',
    staffUserId: null,
    body: input.message,
    status: 'open',
  });
  await notifyStaff(ctx, ticket, order, input.message, false);
  return toMessageView(message);
}

async function addMessage(
  ctx: ServiceContext,
  ticket: Ticket,
  fields: { author: 'buyer' | 'staff'; staffUserId: string | null; body: string; status: TTicketStatus },
): Promise<TicketMessage> {
  const now = ctx.clock.now();
  const message = ctx.em.create(TicketMessageSchema, {
    id: newId(),
    ticket,
    livemode: ticket.livemode,
    author: fields.author,
    staffUser: fields.staffUserId,
    body: fields.body,
    createdAt: now,
  });
  ticket.status = fields.status;
  ticket.updatedAt = now;
  await ctx.em.flush();
  return message;
}

// ---------------------------------------------------------------------------------------------
// Dashboard

/** A ticket of the store with its order; 404 for any other store's. */
async function storeTicket(
  ctx: ServiceContext,
  storeId: string,
  ticketId: string,
): Promise<{ ticket: Ticket; order: Order }> {
  const ticket = await ctx.em.findOne(
    TicketSchema,
    { id: ticketId, store: storeId, livemode: ctx.livemode },
    { populate: ['order'] },
  );
  if (!ticket) throw new AppError('not_found', TICKET_NOT_FOUND);
  return { ticket, order: ticket.order.getEntity() };
}

function rowToSummary(row: TicketRow): TTicketSummary {
  return {
    id: row.id,
    storeId: row.store_id,
    livemode: row.livemode,
    orderId: row.order_id,
    orderNumber: publicOrderNumber(row.order_number),
    customerEmail: row.customer_email || null,
    subject: row.subject,
    status: row.status,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    messageCount: Number(row.message_count),
  };
}

/** One page, newest activity first: `(updated_at, id) < cursor`, served by the (store, updated_at desc, id desc) index. */
export async function listTickets(ctx: ServiceContext, input: TListTicketsQuery): Promise<TTicketList> {
  const key = ctx.deps.config.encryptionKey;
  const limit = input.limit ?? DEFAULT_TICKET_PAGE;
  const filter = { storeId: input.storeId, livemode: ctx.livemode, status: input.status };
  const scope = cursorScope('tickets', filter);
  const rows = await selectTicketPage(
    ctx.em,
    filter,
    input.cursor ? decodeCursor(key, scope, input.cursor) : undefined,
    limit + 1,
  );
  const { page, hasMore, nextCursor } = keysetPage(key, scope, rows, limit, (row) => row.updated_us);
  return { tickets: page.map(rowToSummary), hasMore, nextCursor };
}

export async function getStoreTicket(ctx: ServiceContext, storeId: string, ticketId: string): Promise<TTicket> {
  const { ticket, order } = await storeTicket(ctx, storeId, ticketId);
  return ticketView(ctx, ticket, order);
}

/** A staff answer marks the ticket answered and is e-mailed to the buyer. */
export async function addStaffMessage(
  ctx: ServiceContext,
  staffUserId: string,
  input: { storeId: string; ticketId: string; message: string },
): Promise<TTicketMessage> {
  const { ticket, order } = await storeTicket(ctx, input.storeId, input.ticketId);
  const message = await addMessage(ctx, ticket, {
    author: 'staff',
    staffUserId,
    body: input.message,
    status: 'answered',
  });
  await notifyBuyer(ctx, ticket, order, input.message);
  return toMessageView(message);
}

export async function updateTicketStatus(
  ctx: ServiceContext,
  input: { storeId: string; ticketId: string; status: 'open' | 'closed' },
): Promise<TTicket> {
  const { ticket, order } = await storeTicket(ctx, input.storeId, input.ticketId);
  if (ticket.status !== input.status) {
    ticket.status = input.status;
    ticket.updatedAt = ctx.clock.now();
    await ctx.em.flush();
  }
  return ticketView(ctx, ticket, order);
}
