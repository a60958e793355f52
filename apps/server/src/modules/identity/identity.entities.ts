/** Identity owns people who sign in to the dashboard. Sessions and keys join in the identity issue. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';

export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'user',
  properties: (p) => ({
    id: p.string().primary().length(32),
    /** Always stored lower-cased; the column has a check constraint saying so. */
    email: p.string().length(320).unique(),
    passwordHash: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});
export type User = InferEntity<typeof UserSchema>;
