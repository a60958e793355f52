/** Support tickets about one order, and their messages (buyer or staff), oldest first. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { TICKET_AUTHORS, TICKET_STATUSES } from '@svc/schemas';
import { UserSchema } from '../identity/identity.entities.js';
import { OrderSchema } from '../orders/orders.entities.js';
import { StoreSchema } from '../stores/stores.entities.js';

export const TicketSchema = defineEntity({
  name: 'Ticket',
  tableName: 'ticket',
  indexes: [
    {
      name: 'ticket_store_mode_updated_index',
      expression:
        'create index "ticket_store_mode_updated_index" on "ticket" ("store_id", "livemode", "updated_at" desc, "id" desc)',
    },
    { name: 'ticket_order_index', properties: ['order'] },
  ],
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p.manyToOne(StoreSchema).ref().foreignKeyName('ticket_store_id_fkey').updateRule('no action'),
    order: p.manyToOne(OrderSchema).ref().foreignKeyName('ticket_order_id_fkey').updateRule('no action'),
    /** Its order's mode. */
    livemode: p.boolean().default(true),
    subject: p.string().length(200),
    /** `open` waits for staff, `answered` for the buyer; either side's message moves it. */
    status: p.enum([...TICKET_STATUSES]).default('open'),
    createdAt: p.datetime(),
    /** The last activity (message or status change): the dashboard list's order. */
    updatedAt: p.datetime(),
  }),
});
export type Ticket = InferEntity<typeof TicketSchema>;

export const TicketMessageSchema = defineEntity({
  name: 'TicketMessage',
  tableName: 'ticket_message',
  indexes: [{ name: 'ticket_message_ticket_index', properties: ['ticket', 'createdAt'] }],
  properties: (p) => ({
    id: p.string().primary().length(32),
    ticket: p
      .manyToOne(TicketSchema)
      .ref()
      .foreignKeyName('ticket_message_ticket_id_fkey')
      .updateRule('no action')
      .deleteRule('cascade'),
    /** Its ticket's mode. */
    livemode: p.boolean().default(true),
    author: p.enum([...TICKET_AUTHORS]),
    /** Which staff member answered; kept for the store, never shown. */
    staffUser: p
      .manyToOne(UserSchema)
      .ref()
      .nullable()
      .foreignKeyName('ticket_message_staff_user_id_fkey')
      .updateRule('no action')
      .deleteRule('no action'),
    body: p.text(),
    createdAt: p.datetime(),
  }),
});
export type TicketMessage = InferEntity<typeof TicketMessageSchema>;
