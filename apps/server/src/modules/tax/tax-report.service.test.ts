/**
 * The tax report against the real database, without HTTP: on 10,000 taxed orders (one statement,
 * test/support/tax-orders.ts), the report's rows and totals equal the sums the test makes itself
 * over the same orders (invoices of the period less its credit notes, per country, rate, reverse
 * charge and currency), exactly, in each mode; a mixed-rate order is in both its rates' rows; the
 * CSV says the same numbers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore } from '../../../../../test/support/factories.js';
import { serviceContext } from '../../../../../test/support/in-process.js';
import {
  expectedTaxReport,
  insertTaxedOrders,
  taxedOrder,
  type ExpectedRow,
} from '../../../../../test/support/tax-orders.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { minorToAmount } from '../../lib/money.js';
import { TAX_REPORT_CSV_HEADER, taxReport, taxReportCsv } from './tax-report.service.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const COUNT = 10_000;
const MODEL = Array.from({ length: COUNT }, (_, i) => taxedOrder(i + 1));
const Q2 = { from: '2026-04-01T00:00:00.000Z', to: '2026-07-01T00:00:00.000Z' };

function context(livemode: boolean) {
  return { ...serviceContext(orm), em: orm.em.fork(), livemode };
}

/** The report's rows as the model's: amounts back in minor units (exact: at most two places). */
function asExpected(rows: Awaited<ReturnType<typeof taxReport>>['rows']): ExpectedRow[] {
  return rows.map((row) => ({
    country: row.country,
    ratePpm: Math.round(row.rate * 1_000_000),
    reverseCharge: row.reverseCharge,
    currency: row.currency,
    taxableMinor: Math.round(row.taxable * 100),
    taxMinor: Math.round(row.tax * 100),
    invoices: row.invoices,
    creditNotes: row.creditNotes,
  }));
}

describe('taxReport', () => {
  let storeId: string;
  beforeAll(async () => {
    storeId = (await createStore(orm.em.fork(), { currency: 'EUR' })).id;
    await insertTaxedOrders(workerDatabaseUrl(), storeId, COUNT);
    // Another store's orders, at the same times: not in this store's report.
    const other = (await createStore(orm.em.fork(), { currency: 'EUR' })).id;
    await insertTaxedOrders(workerDatabaseUrl(), other, 500);
  }, 60_000);

  it('equals the sums over the period: invoices paid in it less credit notes issued in it, per country and rate, in each mode', async () => {
    const from = Date.parse(Q2.from);
    const to = Date.parse(Q2.to);
    for (const livemode of [true, false]) {
      const report = await taxReport(context(livemode), { storeId, ...Q2 });
      const expected = expectedTaxReport(MODEL, from, to, livemode);
      // The model is not trivial: every country, both reverse-charge kinds, credit notes, two currencies.
      expect(expected.some((row) => row.creditNotes > 0 && row.invoices > 0)).toBe(true);
      expect(new Set(expected.map((row) => row.currency))).toEqual(new Set(['EUR', 'USD']));
      expect(report.livemode).toBe(livemode);
      expect(report.from).toBe(Q2.from);
      expect(report.to).toBe(Q2.to);
      expect(asExpected(report.rows)).toEqual(expected);
      // The amounts are the exact decimals of the minor sums (no float summing on the way).
      for (const [i, row] of report.rows.entries()) {
        expect(row.taxable).toBe(minorToAmount(expected[i]!.taxableMinor, row.currency));
        expect(row.tax).toBe(minorToAmount(expected[i]!.taxMinor, row.currency));
      }
      const totals = ['EUR', 'USD'].map((currency) => {
        const rows = expected.filter((row) => row.currency === currency);
        return {
          currency,
          taxable: minorToAmount(
            rows.reduce((sum, row) => sum + row.taxableMinor, 0),
            currency,
          ),
          tax: minorToAmount(
            rows.reduce((sum, row) => sum + row.taxMinor, 0),
            currency,
          ),
        };
      });
      expect(report.totals).toEqual(totals);
    }
  });

  it('puts a mixed-rate order in both its rates rows, and a reverse-charge sale apart from a 0% one', async () => {
    const report = await taxReport(context(true), { storeId, ...Q2 });
    const fr = report.rows.filter((row) => row.country === 'FR' && row.currency === 'EUR');
    expect(fr.map((row) => [row.rate, row.reverseCharge])).toEqual([
      [0.2, false],
      [0.055, false],
      [0, true],
    ]);
    const us = report.rows.filter((row) => row.country === 'US' && row.currency === 'EUR');
    expect(us.map((row) => [row.rate, row.reverseCharge])).toEqual([[0, false]]);
    expect(us[0]!.tax).toBe(0);
    // Every invoiced FR order of kind 9 in the period is counted in the 5.5% row and the 20% row.
    const mixed = MODEL.filter(
      (order) =>
        order.i % 10 === 9 &&
        order.livemode &&
        order.invoiced &&
        order.currency === 'EUR' &&
        order.paidAt >= Date.parse(Q2.from) &&
        order.paidAt < Date.parse(Q2.to),
    ).length;
    expect(fr[1]!.invoices).toBe(mixed);
    expect(fr[0]!.invoices).toBeGreaterThan(mixed);
  });

  it('takes `from` inclusive and `to` exclusive, and an empty period has no rows', async () => {
    // Order 1224 was paid at 2026-04-01T00:00Z exactly; order 7776 at 2026-07-01T00:00Z.
    expect(new Date(taxedOrder(1224).paidAt).toISOString()).toBe(Q2.from);
    expect(new Date(taxedOrder(7776).paidAt).toISOString()).toBe(Q2.to);
    const instant = Date.parse(Q2.from);
    const oneOrder = await taxReport(context(true), {
      storeId,
      from: Q2.from,
      to: new Date(instant + 60_000).toISOString(),
    });
    expect(oneOrder.rows.map((row) => [row.country, row.invoices, row.creditNotes])).toEqual([['FR', 1, 0]]);
    expect(asExpected(oneOrder.rows)).toEqual(expectedTaxReport(MODEL, instant, instant + 60_000, true));
    const empty = await taxReport(context(true), { storeId, from: Q2.from, to: Q2.from });
    expect(empty).toMatchObject({ rows: [], totals: [] });
  });

  it('says the same numbers as CSV: a header line, then one line per row', async () => {
    const report = await taxReport(context(true), { storeId, ...Q2 });
    const [header, ...lines] = taxReportCsv(report).trimEnd().split('\r\n');
    expect(header).toBe(TAX_REPORT_CSV_HEADER.join(','));
    expect(lines).toHaveLength(report.rows.length);
    const parsed = lines.map((text) => {
      const [country, rate, reverseCharge, currency, taxable, tax, invoices, creditNotes] = text.split(',');
      return {
        country,
        rate: Number(rate),
        reverseCharge: reverseCharge === 'true',
        currency,
        taxable: Number(taxable),
        tax: Number(tax),
        invoices: Number(invoices),
        creditNotes: Number(creditNotes),
      };
    });
    expect(parsed).toEqual(report.rows);
    // Amounts keep the currency's places (`12.50`, never `12.5`).
    for (const text of lines) expect(text.split(',')[4]).toMatch(/^-?\d+\.\d\d$/);
  });
});
