/** Buyers who sign in to one store with a code sent to their e-mail. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { StoreSchema } from '../stores/stores.entities.js';

export const CustomerSchema = defineEntity({
  name: 'Customer',
  tableName: 'customer',
  uniques: [{ properties: ['store', 'livemode', 'email'] }],
  indexes: [
    // The seller's list (customers.dashboardList): a store's signed-in buyers by address, in byte
    // order (keyset pages and the prefix search alike, whatever the database's collation).
    {
      name: 'customer_store_mode_email_c_index',
      expression:
        'create index "customer_store_mode_email_c_index" on "customer" ("store_id", "livemode", "email" collate "C")',
    },
  ],
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p
      .manyToOne(StoreSchema)
      .ref()
      .foreignKeyName('customer_store_id_fkey')
      .updateRule('no action')
      .deleteRule('cascade'),
    /** Test mode (docs/architecture.md, Test mode): false for a test-mode row; every row a mode's objects are made of carries it. */
    livemode: p.boolean().default(true),
    email: p.string().length(320),
    createdAt: p.datetime(),
    lastLoginAt: p.datetime().nullable(),
  }),
});
export type Customer = InferEntity<typeof CustomerSchema>;

/** A login code: stored as an HMAC under a server key, single use, short-lived. */
export const CustomerCodeSchema = defineEntity({
  name: 'CustomerCode',
  tableName: 'customer_code',
  indexes: [{ properties: ['store', 'email'] }],
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p
      .manyToOne(StoreSchema)
      .ref()
      .foreignKeyName('customer_code_store_id_fkey')
      .updateRule('no action')
      .deleteRule('cascade'),
    email: p.string().length(320),
    codeHash: p.string().length(64),
    attempts: p.integer().default(0),
    createdAt: p.datetime(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
  }),
});
export type CustomerCode = InferEntity<typeof CustomerCodeSchema>;

export const CustomerSessionSchema = defineEntity({
  name: 'CustomerSession',
  tableName: 'customer_session',
  properties: (p) => ({
    idHash: p.string().primary().length(64),
    customer: p
      .manyToOne(CustomerSchema)
      .ref()
      .foreignKeyName('customer_session_customer_id_fkey')
      .updateRule('no action')
      .deleteRule('cascade')
      .index(),
    createdAt: p.datetime(),
    expiresAt: p.datetime(),
  }),
});
export type CustomerSession = InferEntity<typeof CustomerSessionSchema>;
