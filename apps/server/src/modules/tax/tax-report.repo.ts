/**
 * The tax module's raw SQL: the tax report's one aggregate. It reads the orders module's tables
 * (an order's invoice and credit note, its lines' net, tax and rate) and writes nothing.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { readOnReplica } from '../../db/replicas.js';

/** One group of the report as SQL answers it: the sums are `numeric` (exact), as text. */
export interface TaxReportGroupRow {
  country: string;
  rate_ppm: number;
  reverse_charge: boolean;
  currency: string;
  taxable_minor: string;
  tax_minor: string;
  invoices: string;
  credit_notes: string;
}

export interface TaxReportFilter {
  storeId: string;
  livemode: boolean;
  /** The period, `from` inclusive and `to` exclusive. */
  from: Date;
  to: Date;
}

/**
 * The invoices paid in the period (+1) and the credit notes issued in it (-1, whenever their invoice
 * was paid) as one signed set of documents, their lines grouped by the tax country, the line's rate
 * (an order may mix an e-book line at a reduced rate with a standard one), reverse charge and
 * currency. One grouped aggregate over a UNION ALL the ORM cannot write; the sums stay in SQL over
 * every line of the period (bigint summed to numeric: exact, never a float), so no order is loaded.
 * The invoices arm is a range on order_store_mode_invoiced_paid_index, the credit notes arm one on
 * order_store_mode_credited_refunded_index; the lines come by order_line's order index. An invoice
 * without a tax country cannot be made (tax is worked out for one); `XX`, the order table's unknown
 * country, keeps such a row visible rather than dropping its money. On a replica when there is one:
 * a report of a period may trail the primary by the replica's lag, as Home's figures do.
 */
export async function selectTaxReportGroups(em: EntityManager, filter: TaxReportFilter): Promise<TaxReportGroupRow[]> {
  return readOnReplica(
    em,
    `with documents as (
       select o.id, 1 as sign, o.tax_country, o.reverse_charge, o.currency
       from "order" o
       where o.store_id = ? and o.livemode = ? and o.invoice_number is not null and o.paid_at >= ? and o.paid_at < ?
       union all
       select o.id, -1 as sign, o.tax_country, o.reverse_charge, o.currency
       from "order" o
       where o.store_id = ? and o.livemode = ? and o.credit_note_number is not null and o.refunded_at >= ? and o.refunded_at < ?)
     select coalesce(d.tax_country, 'XX') as country, l.tax_rate_ppm as rate_ppm, d.reverse_charge, d.currency,
       sum(d.sign * l.net_minor)::text as taxable_minor,
       sum(d.sign * l.tax_minor)::text as tax_minor,
       count(distinct d.id) filter (where d.sign = 1) as invoices,
       count(distinct d.id) filter (where d.sign = -1) as credit_notes
     from documents d
     join order_line l on l.order_id = d.id
     group by 1, 2, 3, 4
     order by 1, 2 desc, 3, 4`,
    [filter.storeId, filter.livemode, filter.from, filter.to, filter.storeId, filter.livemode, filter.from, filter.to],
  );
}
