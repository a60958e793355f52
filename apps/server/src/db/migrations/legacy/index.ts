/**
 * The six hand-written migrations the baseline replaced, kept so a database that ran only some of
 * them can be brought up to the baseline's schema and then adopt it (db/orm.ts). Never edited.
 */
import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121000000_base } from './Migration20261121000000_base.js';
import { Migration20261121010000_identity_orders } from './Migration20261121010000_identity_orders.js';
import { Migration20261121020000_catalog_checkout } from './Migration20261121020000_catalog_checkout.js';
import { Migration20261121030000_payments_fulfilment } from './Migration20261121030000_payments_fulfilment.js';
import { Migration20261121040000_webhooks } from './Migration20261121040000_webhooks.js';
import { Migration20261121050000_idempotency } from './Migration20261121050000_idempotency.js';

export const LEGACY_MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261121000000_base', class: Migration20261121000000_base },
  { name: 'Migration20261121010000_identity_orders', class: Migration20261121010000_identity_orders },
  { name: 'Migration20261121020000_catalog_checkout', class: Migration20261121020000_catalog_checkout },
  { name: 'Migration20261121030000_payments_fulfilment', class: Migration20261121030000_payments_fulfilment },
  { name: 'Migration20261121040000_webhooks', class: Migration20261121040000_webhooks },
  { name: 'Migration20261121050000_idempotency', class: Migration20261121050000_idempotency },
];
