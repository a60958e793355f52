/** Stores and who works in them. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { UserSchema } from '../identity/identity.entities.js';

export const StoreSchema = defineEntity({
  name: 'Store',
  tableName: 'store',
  checks: [
    { name: 'store_subdomain_lower', expression: 'subdomain = lower(subdomain)' },
    {
      name: 'store_subscription_grace_days_check',
      expression: 'subscription_grace_days >= 0 and subscription_grace_days <= 30',
    },
    { name: 'store_license_lease_days_check', expression: 'license_lease_days >= 1 and license_lease_days <= 90' },
  ],
  // Customer-route CORS looks stores up by an allowed origin.
  indexes: [
    {
      name: 'store_allowed_origins_index',
      expression: 'create index "store_allowed_origins_index" on "store" using gin ("allowed_origins")',
    },
  ],
  properties: (p) => ({
    id: p.string().primary().length(32),
    name: p.string().length(100),
    subdomain: p.string().length(63).unique(),
    currency: p.string().length(3),
    banned: p.boolean().default(false),
    /** The storefront's look (docs/architecture.md, The faces): plain text under the name, and a `#rrggbb` accent. */
    description: p.text().default(''),
    accentColor: p.string().length(7).nullable(),
    /** The logo's `file` row (catalog/logo.service.ts); no foreign key, as the stores module cannot name the catalog's entity. */
    logoFileId: p.string().length(32).nullable(),
    allowedOrigins: p.array().default([]),
    settings: p.json<Record<string, unknown>>().default('{}'),
    /**
     * Setup marks for the Home's checklist (flows/store-onboarding.ts), each set once: when payment
     * settings were first saved (a new store already offers manual payment, so the methods alone
     * cannot say the seller chose), and when the seller's side first opened the storefront.
     */
    paymentMethodsChosenAt: p.datetime().nullable(),
    firstPreviewedAt: p.datetime().nullable(),
    /**
     * The owner requires two-factor sign-in of every member: the store guard (access/guards.ts)
     * reads it from the membership row's join, so it costs no query of its own.
     */
    requireTwoFactor: p.boolean().default(false),
    /**
     * Days a past_due subscription's licenses stay valid (settings.subscriptionGraceDays). A column,
     * not part of `settings`: the License API's one statement reads it by the store's primary key.
     */
    subscriptionGraceDays: p.integer().default(7),
    /**
     * Days an offline license lease lasts at most (settings.licenseLeaseDays, 1 to 90): a column
     * for the same reason, the License API's statement reads it.
     */
    licenseLeaseDays: p.integer().default(7),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});
export type Store = InferEntity<typeof StoreSchema>;

export const STORE_ROLES = ['owner', 'staff'] as const;

export const StoreMemberSchema = defineEntity({
  name: 'StoreMember',
  tableName: 'store_member',
  uniques: [{ properties: ['store', 'user'] }],
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p
      .manyToOne(StoreSchema)
      .ref()
      .foreignKeyName('store_member_store_id_fkey')
      .updateRule('no action')
      .deleteRule('cascade'),
    user: p
      .manyToOne(UserSchema)
      .ref()
      .foreignKeyName('store_member_user_id_fkey')
      .updateRule('no action')
      .deleteRule('cascade')
      .index(),
    role: p.enum([...STORE_ROLES]),
    permissions: p.array().default([]),
    createdAt: p.datetime(),
  }),
});
export type StoreMember = InferEntity<typeof StoreMemberSchema>;
