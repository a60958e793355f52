/**
 * Taxed orders for the tax report's tests, written straight to the database in one statement
 * (generate_series: 10,000 orders and their lines in a second), and the same orders as a model in
 * JavaScript: `taxedOrder(i)` says what order `i` is, and `expectedTaxReport` sums the model over a
 * period, independently of the report's SQL. The statement computes each column from `i` with the
 * same integer rules the model writes out, so the two describe the same rows.
 *
 * Order `i` (1-based), by `i % 10`: 0-2 DE at 19%, 3-4 FR at 20%, 5-6 IT at 22%, 7 FR reverse
 * charge at 0, 8 US at 0, 9 FR with two lines (an e-book at 5.5% and a standard line at 20%).
 * Paid every 20 minutes from `PAID_FROM`; every 7th refunded 0 to 49 days after it was paid;
 * every 11th was never invoiced (no invoice, no credit note: the report leaves it out, refunded
 * or not); every 13th is a test-mode order; every 17th is in USD, the rest in EUR.
 */
import pg from 'pg';

export const PAID_FROM = Date.UTC(2026, 2, 15);
const MINUTE = 60_000;
const DAY = 86_400_000;
const PPM = 1_000_000;

export interface ModelLine {
  ratePpm: number;
  netMinor: number;
  taxMinor: number;
}

export interface ModelOrder {
  i: number;
  livemode: boolean;
  currency: string;
  country: string;
  reverseCharge: boolean;
  invoiced: boolean;
  paidAt: number;
  /** When refunded (a credit note when invoiced); null otherwise. */
  refundedAt: number | null;
  lines: ModelLine[];
}

/** Tax on a net amount at a rate, half up, in integers (the statement's `(net * ppm + 500000) / 1000000`). */
const taxOf = (netMinor: number, ratePpm: number) => Math.floor((netMinor * ratePpm + PPM / 2) / PPM);

function line(netMinor: number, ratePpm: number): ModelLine {
  return { ratePpm, netMinor, taxMinor: taxOf(netMinor, ratePpm) };
}

export function taxedOrder(i: number): ModelOrder {
  const kind = i % 10;
  const net = 1000 + ((i * 37) % 9000);
  const country = kind <= 2 ? 'DE' : kind <= 4 || kind === 7 || kind === 9 ? 'FR' : kind <= 6 ? 'IT' : 'US';
  const ratePpm = kind <= 2 ? 190_000 : kind <= 4 || kind === 9 ? 200_000 : kind <= 6 ? 220_000 : 0;
  const lines = [line(net, ratePpm)];
  if (kind === 9) lines.unshift(line(500 + ((i * 13) % 2000), 55_000));
  const paidAt = PAID_FROM + i * 20 * MINUTE;
  return {
    i,
    livemode: i % 13 !== 0,
    currency: i % 17 === 0 ? 'USD' : 'EUR',
    country,
    reverseCharge: kind === 7,
    invoiced: i % 11 !== 0,
    paidAt,
    refundedAt: i % 7 === 0 ? paidAt + (i % 50) * DAY : null,
    lines,
  };
}

/**
 * Inserts orders 1..count for a store in one statement: the orders (a writable CTE, each row
 * computed from `i`), then their lines, one or two per order, joined back on the order's `i`
 * (kept in `note`, the one free text column).
 */
export async function insertTaxedOrders(databaseUrl: string, storeId: string, count: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `with spec as (
         select i, i % 10 as kind, 1000 + (i * 37) % 9000 as net, 500 + (i * 13) % 2000 as ebook_net,
           to_timestamp($2::bigint / 1000.0) + i * interval '20 minutes' as paid_at
         from generate_series(1, $3::int) as i),
       rated as (
         select spec.*,
           case when kind <= 2 then 'DE' when kind <= 4 or kind in (7, 9) then 'FR' when kind <= 6 then 'IT' else 'US' end as country,
           case when kind <= 2 then 190000 when kind <= 4 or kind = 9 then 200000 when kind <= 6 then 220000 else 0 end as rate_ppm
         from spec),
       orders as (
         insert into "order" (id, store_id, livemode, status, product_name, price_minor, paid_minor, currency,
           customer_email, note, tax_behavior, tax_country, reverse_charge, invoice_number, invoice_seller,
           credit_note_number, paid_at, refunded_at, created_at, updated_at)
         select md5($1 || ':' || i), $1, i % 13 <> 0, case when i % 7 = 0 then 'refunded' else 'completed' end,
           'Taxed ' || i, net, net, case when i % 17 = 0 then 'USD' else 'EUR' end,
           'buyer-' || i || '@example.test', i::text, 'exclusive', country, kind = 7,
           case when i % 11 <> 0 then 'INV-2026-' || i end,
           case when i % 11 <> 0 then '{"name": "Report Seller", "address": "", "taxId": ""}'::jsonb end,
           case when i % 11 <> 0 and i % 7 = 0 then 'CN-2026-' || i end,
           paid_at, case when i % 7 = 0 then paid_at + (i % 50) * interval '1 day' end, paid_at, paid_at
         from rated
         returning id, note, livemode)
       insert into order_line (id, order_id, livemode, product_name, quantity, unit_price_minor, position,
         tax_category, net_minor, tax_minor, tax_rate_ppm)
       select md5(o.id || ':' || l.position), o.id, o.livemode, 'Line ' || l.position, 1, l.net, l.position,
         l.category, l.net, (l.net::bigint * l.rate_ppm + 500000) / 1000000, l.rate_ppm
       from orders o
       join rated r on r.i = o.note::int
       cross join lateral (values (0, 'standard', r.net, r.rate_ppm), (1, 'ebook', r.ebook_net, 55000)) as l(position, category, net, rate_ppm)
       where l.position = 0 or r.kind = 9`,
      [storeId, PAID_FROM, count],
    );
  } finally {
    await client.end();
  }
}

export interface ExpectedRow {
  country: string;
  ratePpm: number;
  reverseCharge: boolean;
  currency: string;
  taxableMinor: number;
  taxMinor: number;
  invoices: number;
  creditNotes: number;
}

/**
 * The report the model gives for `[from, to)` in one mode: invoices paid in the period added, credit
 * notes issued in it subtracted, each line in its rate's row; sorted as the report sorts (country,
 * rate highest first, reverse charge, currency).
 */
export function expectedTaxReport(orders: ModelOrder[], from: number, to: number, livemode: boolean): ExpectedRow[] {
  const rows = new Map<string, ExpectedRow & { invoiceSet: Set<number>; creditSet: Set<number> }>();
  const add = (order: ModelOrder, sign: 1 | -1) => {
    for (const l of order.lines) {
      const key = [order.country, l.ratePpm, order.reverseCharge, order.currency].join('|');
      let row = rows.get(key);
      if (!row) {
        row = {
          country: order.country,
          ratePpm: l.ratePpm,
          reverseCharge: order.reverseCharge,
          currency: order.currency,
          taxableMinor: 0,
          taxMinor: 0,
          invoices: 0,
          creditNotes: 0,
          invoiceSet: new Set(),
          creditSet: new Set(),
        };
        rows.set(key, row);
      }
      row.taxableMinor += sign * l.netMinor;
      row.taxMinor += sign * l.taxMinor;
      (sign === 1 ? row.invoiceSet : row.creditSet).add(order.i);
    }
  };
  for (const order of orders) {
    if (order.livemode !== livemode || !order.invoiced) continue;
    if (order.paidAt >= from && order.paidAt < to) add(order, 1);
    if (order.refundedAt !== null && order.refundedAt >= from && order.refundedAt < to) add(order, -1);
  }
  return [...rows.values()]
    .map(({ invoiceSet, creditSet, ...row }) => ({ ...row, invoices: invoiceSet.size, creditNotes: creditSet.size }))
    .sort(
      (a, b) =>
        a.country.localeCompare(b.country) ||
        b.ratePpm - a.ratePpm ||
        Number(a.reverseCharge) - Number(b.reverseCharge) ||
        a.currency.localeCompare(b.currency),
    );
}
