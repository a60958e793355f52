/**
 * The tax report (docs/decisions.md, "#42 The tax report"): per country, rate, reverse charge and
 * currency, the taxable amount and the tax of the invoices paid in a period less the credit notes
 * issued in it: what a one-stop-shop return needs. The sums are made in SQL, exact, in minor units
 * (tax-report.repo.ts), and become amounts here, at the edge. The same rows as CSV: taxReportCsv.
 */
import type { TTaxReport, TTaxReportQuery, TTaxReportRow } from '@svc/schemas';
import { currencyExponent, minorToAmount } from '../../lib/money.js';
import { iso } from '../../lib/timestamps.js';
import type { ServiceContext } from '../request/context.js';
import { PPM } from './rates.js';
import { selectTaxReportGroups } from './tax-report.repo.js';

/** A sum SQL made exactly (numeric as text) as a number of minor units; past 2^53 it could not be exact, so it is refused. */
function exactMinor(text: string): number {
  const minor = Number(text);
  if (!Number.isSafeInteger(minor)) throw new RangeError(`the tax report's sum ${text} is past 2^53 minor units`);
  return minor;
}

/** The store's tax report over `[from, to)` in the call's mode (its credential's: a test key reads test orders). */
export async function taxReport(ctx: ServiceContext, input: TTaxReportQuery): Promise<TTaxReport> {
  const from = new Date(input.from);
  const to = new Date(input.to);
  const groups = await selectTaxReportGroups(ctx.em, { storeId: input.storeId, livemode: ctx.livemode, from, to });
  const totals = new Map<string, { taxableMinor: number; taxMinor: number }>();
  const rows: TTaxReportRow[] = groups.map((group) => {
    const taxableMinor = exactMinor(group.taxable_minor);
    const taxMinor = exactMinor(group.tax_minor);
    const total = totals.get(group.currency) ?? { taxableMinor: 0, taxMinor: 0 };
    total.taxableMinor += taxableMinor;
    total.taxMinor += taxMinor;
    totals.set(group.currency, total);
    return {
      country: group.country,
      rate: group.rate_ppm / PPM,
      reverseCharge: group.reverse_charge,
      currency: group.currency,
      taxable: minorToAmount(taxableMinor, group.currency),
      tax: minorToAmount(taxMinor, group.currency),
      invoices: Number(group.invoices),
      creditNotes: Number(group.credit_notes),
    };
  });
  return {
    storeId: input.storeId,
    livemode: ctx.livemode,
    from: iso(from),
    to: iso(to),
    rows,
    totals: [...totals]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([currency, total]) => ({
        currency,
        taxable: minorToAmount(total.taxableMinor, currency),
        tax: minorToAmount(total.taxMinor, currency),
      })),
  };
}

/** The CSV's columns, in order: the JSON row's fields, snake_case. */
export const TAX_REPORT_CSV_HEADER = [
  'country',
  'rate',
  'reverse_charge',
  'currency',
  'taxable',
  'tax',
  'invoices',
  'credit_notes',
] as const;

/** An amount as exact decimal text with the currency's places (`1234.50`, `-3.00`, JPY `500`): no float is printed. */
function decimalText(amount: number, currency: string): string {
  const exponent = currencyExponent(currency);
  const minor = Math.round(amount * 10 ** exponent);
  const digits = String(Math.abs(minor)).padStart(exponent + 1, '0');
  const text = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  return minor < 0 ? `-${text}` : text;
}

/**
 * The report's rows as CSV (RFC 4180: comma-separated, CRLF line ends, a header line first), one
 * line per row and no totals line, so a spreadsheet's sum of a column is the total. Every cell is a
 * country or currency code, a number or `true`/`false`: none needs quoting, and none can start a
 * formula (a negative amount starts with `-` followed by a digit only).
 */
export function taxReportCsv(report: TTaxReport): string {
  const lines = [TAX_REPORT_CSV_HEADER.join(',')];
  for (const row of report.rows) {
    lines.push(
      [
        row.country,
        String(row.rate),
        String(row.reverseCharge),
        row.currency,
        decimalText(row.taxable, row.currency),
        decimalText(row.tax, row.currency),
        String(row.invoices),
        String(row.creditNotes),
      ].join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** The CSV download's file name: `tax-report-<from day>-<to day>.csv` (the days of the period's UTC instants). */
export function taxReportFilename(report: TTaxReport): string {
  return `tax-report-${report.from.slice(0, 10)}-${report.to.slice(0, 10)}.csv`;
}
