/** Buyers a store refuses, by e-mail, IP address or country. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { StoreSchema } from '../stores/stores.entities.js';

export const BLACKLIST_KINDS = ['email', 'ip', 'country'] as const;

export const BlacklistEntrySchema = defineEntity({
  name: 'BlacklistEntry',
  tableName: 'blacklist_entry',
  uniques: [{ properties: ['store', 'livemode', 'kind', 'value'] }],
  properties: (p) => ({
    id: p.string().primary().length(32),
    store: p.manyToOne(StoreSchema).ref().foreignKeyName('blacklist_entry_store_id_fkey').updateRule('no action'),
    /** Test mode (docs/architecture.md, Test mode): false for a test-mode row; every row a mode's objects are made of carries it. */
    livemode: p.boolean().default(true),
    kind: p.enum([...BLACKLIST_KINDS]),
    /** Normalised: e-mails lower-cased, countries upper-cased. */
    value: p.string().length(320),
    note: p.string().length(200).default(''),
    createdAt: p.datetime(),
  }),
});
export type BlacklistEntry = InferEntity<typeof BlacklistEntrySchema>;
