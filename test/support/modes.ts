/**
 * The tables whose rows belong to one mode (test mode: docs/architecture.md): each has its own `livemode`
 * column. The wipe's tests walk this list; `modeTablesInDatabase` is what the schema says, so a
 * per-mode table added later without the wipe knowing it fails the service test.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

export const PER_MODE_TABLES = [
  'product',
  'product_plan',
  'license_key',
  'license_instance',
  'file',
  'coupon',
  'blacklist_entry',
  'order',
  'order_line',
  'customer',
  'event',
  'webhook',
  'webhook_delivery',
  'ticket',
  'ticket_message',
  'subscription',
  'saved_payment_method',
  'test_gateway_charge',
  'license_signing_key',
  'invoice_counter',
] as const;

/** Every table of the schema with a `livemode` column, sorted. */
export async function modeTablesInDatabase(em: EntityManager): Promise<string[]> {
  const rows = await em.execute<Array<{ table_name: string }>>(
    `select table_name from information_schema.columns
      where column_name = 'livemode' and table_schema = current_schema() order by table_name`,
  );
  return rows.map((row) => row.table_name);
}
