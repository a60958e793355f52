/** Stores and who works in them. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { UserSchema } from '../identity/identity.entities.js';

export const StoreSchema = defineEntity({
  name: 'Store',
  tableName: 'store',
  properties: (p) => ({
    id: p.string().primary().length(32),
    name: p.string().length(100),
    subdomain: p.string().length(63).unique(),
    currency: p.string().length(3),
    banned: p.boolean().default(false),
    allowedOrigins: p.array().default([]),
    settings: p.json<Record<string, unknown>>().default('{}'),
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
    store: p.manyToOne(StoreSchema).ref().deleteRule('cascade'),
    user: p.manyToOne(UserSchema).ref().deleteRule('cascade').index(),
    role: p.enum([...STORE_ROLES]),
    permissions: p.array().default([]),
    createdAt: p.datetime(),
  }),
});
export type StoreMember = InferEntity<typeof StoreMemberSchema>;
