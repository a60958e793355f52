/**
 * Orders written straight to the database, as checkout will write them: the merchant read
 * API is tested before checkout exists, and paging tests need hundreds of rows quickly.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { newId } from '../../apps/server/src/lib/ids.js';

export interface OrderSeed {
  status?: string;
  /** The order's mode: live unless false (a test-mode order). */
  livemode?: boolean;
  priceMinor?: number;
  paidMinor?: number;
  currency?: string;
  customerEmail?: string;
  createdAt?: Date;
  buyerIp?: string;
  userAgent?: string;
  note?: string;
  customFieldResponses?: Array<{ name: string; value: string }>;
  lines?: Array<{ productName: string; quantity: number; unitPriceMinor: number }>;
}

export interface SeededOrder {
  id: string;
  number: number;
  createdAt: Date;
}

/** Inserts orders (and their lines) for a store in one round trip per 500 orders. */
export async function insertOrders(databaseUrl: string, storeId: string, seeds: OrderSeed[]): Promise<SeededOrder[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const out: SeededOrder[] = [];
  try {
    for (let start = 0; start < seeds.length; start += 500) {
      const batch = seeds.slice(start, start + 500);
      const values: unknown[] = [];
      const rows: string[] = [];
      const lineValues: unknown[] = [];
      const lineRows: string[] = [];
      const ids: string[] = [];
      for (const seed of batch) {
        const id = newId();
        ids.push(id);
        const lines = seed.lines ?? [
          { productName: 'Test Product', quantity: 1, unitPriceMinor: seed.priceMinor ?? 1999 },
        ];
        const createdAt = seed.createdAt ?? new Date();
        const productName =
          lines.length > 1 ? `${lines[0]!.productName} +${lines.length - 1} more` : lines[0]!.productName;
        const row = [
          id,
          storeId,
          seed.status ?? 'pending',
          productName,
          seed.priceMinor ?? 1999,
          seed.paidMinor ?? 0,
          seed.currency ?? 'USD',
          seed.customerEmail ?? `buyer-${randomBytes(4).toString('hex')}@example.test`,
          seed.buyerIp ?? '198.51.100.7',
          seed.userAgent ?? 'Mozilla/5.0 (TestAgent)',
          seed.note ?? '',
          JSON.stringify(seed.customFieldResponses ?? []),
          createdAt,
          createdAt,
          seed.livemode ?? true,
        ];
        rows.push(`(${row.map((_, i) => `$${values.length + i + 1}`).join(', ')})`);
        values.push(...row);
        for (const [position, line] of lines.entries()) {
          const lineRow = [newId(), id, line.productName, line.quantity, line.unitPriceMinor, position];
          lineRows.push(`(${lineRow.map((_, i) => `$${lineValues.length + i + 1}`).join(', ')})`);
          lineValues.push(...lineRow);
        }
      }
      const result = await client.query<{ id: string; number: string; created_at: Date | string }>(
        `insert into "order" (id, store_id, status, product_name, price_minor, paid_minor, currency, customer_email, buyer_ip, user_agent, note, custom_field_responses, created_at, updated_at, livemode)
         values ${rows.join(', ')} returning id, number, created_at`,
        values,
      );
      await client.query(
        `insert into order_line (id, order_id, product_name, quantity, unit_price_minor, position) values ${lineRows.join(', ')}`,
        lineValues,
      );
      const byId = new Map(result.rows.map((row) => [row.id, row]));
      for (const id of ids) {
        const row = byId.get(id)!;
        out.push({ id, number: Number(row.number), createdAt: new Date(row.created_at) });
      }
    }
  } finally {
    await client.end();
  }
  return out;
}
