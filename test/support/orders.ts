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

/**
 * An order with an invoice and a credit note, written straight to the database (a paid order's
 * numbers come from settlement, its credit note from a refund): for the sweeps, which need every
 * store route to have something to answer. Refunded, taxed at 19% on its one line.
 */
export async function insertInvoicedOrder(
  databaseUrl: string,
  storeId: string,
  opts: { livemode?: boolean; invoiceNumber?: string; creditNoteNumber?: string; customerEmail?: string } = {},
): Promise<SeededOrder> {
  const [order] = await insertOrders(databaseUrl, storeId, [
    {
      status: 'refunded',
      priceMinor: 1190,
      paidMinor: 1190,
      currency: 'EUR',
      livemode: opts.livemode ?? true,
      ...(opts.customerEmail ? { customerEmail: opts.customerEmail } : {}),
    },
  ]);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `update "order" set tax_behavior = 'exclusive', subtotal_minor = 1000, tax_minor = 190, tax_rate_ppm = 190000,
         tax_country = 'DE', billing_country = 'DE', invoice_number = $2, credit_note_number = $3,
         paid_at = created_at, refunded_at = created_at,
         invoice_seller = (select jsonb_build_object('name', s.name, 'address', '', 'taxId', '')
                             from store s where s.id = "order".store_id)
       where id = $1`,
      [order!.id, opts.invoiceNumber ?? 'INV-2026-1', opts.creditNoteNumber ?? 'CN-2026-1'],
    );
    await client.query(
      `update order_line set unit_price_minor = 1000, net_minor = 1000, tax_minor = 190, tax_rate_ppm = 190000 where order_id = $1`,
      [order!.id],
    );
  } finally {
    await client.end();
  }
  return order!;
}
