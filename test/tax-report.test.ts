/**
 * Black-box: the tax report over HTTP, as a merchant's integration and the dashboard read it
 * (issue #42): JSON equal to the test's own sums over the orders it wrote, the same numbers as CSV
 * with `format=csv` (a header line, rows that parse back), each mode its own, the key's scope, and
 * bad periods and formats refused 400 naming the field.
 */
import { createMerchantClient, SvcInvalidRequestError } from '@svc/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createKeyFor,
  createStoreFor,
  dashboard,
  dashboardInMode,
  merchantGet,
  registerSeller,
  type Seller,
} from './support/seller.js';
import { startServer } from './support/server.js';
import { expectedTaxReport, insertTaxedOrders, taxedOrder, type ExpectedRow } from './support/tax-orders.js';

let server: Awaited<ReturnType<typeof startServer>>;
let owner: Seller;

const COUNT = 3_000;
const MODEL = Array.from({ length: COUNT }, (_, i) => taxedOrder(i + 1));
const FROM = '2026-04-01T00:00:00.000Z';
const TO = '2026-05-01T00:00:00.000Z';
const PERIOD = `from=${encodeURIComponent(FROM)}&to=${encodeURIComponent(TO)}`;

beforeAll(async () => {
  server = await startServer();
  owner = await registerSeller(server.url);
});
afterAll(() => server?.stop());

/** A store of its own with the model's orders, and a key reading its orders. */
async function storeWithOrders(): Promise<{ storeId: string; key: string }> {
  const { id: storeId } = await createStoreFor(owner);
  await insertTaxedOrders(server.db.url, storeId, COUNT);
  const { key } = await createKeyFor(owner, { scopes: ['order:read'], storeIds: [storeId] });
  return { storeId, key };
}

interface ReportRow {
  country: string;
  rate: number;
  reverseCharge: boolean;
  currency: string;
  taxable: number;
  tax: number;
  invoices: number;
  creditNotes: number;
}

function asExpected(rows: ReportRow[]): ExpectedRow[] {
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

/** The CSV's lines as the JSON's rows (RFC 4180 with CRLF; no cell of this report is quoted). */
function parseCsv(text: string): { header: string; rows: ReportRow[] } {
  expect(text.endsWith('\r\n')).toBe(true);
  const [header, ...lines] = text.slice(0, -2).split('\r\n');
  return {
    header: header!,
    rows: lines.map((line) => {
      const cells = line.split(',');
      expect(cells).toHaveLength(8);
      const [country, rate, reverseCharge, currency, taxable, tax, invoices, creditNotes] = cells;
      return {
        country: country!,
        rate: Number(rate),
        reverseCharge: reverseCharge === 'true',
        currency: currency!,
        taxable: Number(taxable),
        tax: Number(tax),
        invoices: Number(invoices),
        creditNotes: Number(creditNotes),
      };
    }),
  };
}

describe('GET /api/merchant/v1/stores/{storeId}/reports/tax', () => {
  it("answers the period's invoices less its credit notes per country and rate, as the test sums them", async () => {
    const { storeId, key } = await storeWithOrders();
    const response = await merchantGet(server.url, key, `/stores/${storeId}/reports/tax?${PERIOD}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const report = await response.json();
    expect(report).toMatchObject({ storeId, livemode: true, from: FROM, to: TO });
    const expected = expectedTaxReport(MODEL, Date.parse(FROM), Date.parse(TO), true);
    expect(expected.length).toBeGreaterThan(8);
    expect(asExpected(report.rows)).toEqual(expected);
    const eur = expected.filter((row) => row.currency === 'EUR');
    expect(report.totals.find((total: { currency: string }) => total.currency === 'EUR')).toEqual({
      currency: 'EUR',
      taxable: eur.reduce((sum, row) => sum + row.taxableMinor, 0) / 100,
      tax: eur.reduce((sum, row) => sum + row.taxMinor, 0) / 100,
    });
    // The dashboard's path (a member's session) answers the same report.
    const viaDashboard = await dashboard(owner, 'GET', `/api/dashboard/stores/${storeId}/reports/tax?${PERIOD}`);
    expect(viaDashboard.status).toBe(200);
    expect(await viaDashboard.json()).toEqual(report);
  });

  it('answers the same numbers as CSV with format=csv: a header line, then rows that parse back', async () => {
    const { storeId, key } = await storeWithOrders();
    const json = await (await merchantGet(server.url, key, `/stores/${storeId}/reports/tax?${PERIOD}`)).json();
    const response = await merchantGet(server.url, key, `/stores/${storeId}/reports/tax?${PERIOD}&format=csv`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(
      "attachment; filename*=UTF-8''tax-report-2026-04-01-2026-05-01.csv",
    );
    const csv = parseCsv(await response.text());
    expect(csv.header).toBe('country,rate,reverse_charge,currency,taxable,tax,invoices,credit_notes');
    expect(csv.rows).toEqual(json.rows);
    // format=json is the default said out loud; the dashboard's path answers CSV too (its download).
    const explicit = await merchantGet(server.url, key, `/stores/${storeId}/reports/tax?${PERIOD}&format=json`);
    expect(await explicit.json()).toEqual(json);
    const viaDashboard = await dashboard(
      owner,
      'GET',
      `/api/dashboard/stores/${storeId}/reports/tax?${PERIOD}&format=csv`,
    );
    expect(viaDashboard.status).toBe(200);
    expect(parseCsv(await viaDashboard.text()).rows).toEqual(json.rows);
  });

  it("is the SDK's reports.tax, typed: the same report, and a bad period a typed 400", async () => {
    const { storeId, key } = await storeWithOrders();
    const svc = createMerchantClient({ baseUrl: server.url, apiKey: key });
    const report = await svc.reports.tax({ storeId, from: FROM, to: TO });
    const rest = await (await merchantGet(server.url, key, `/stores/${storeId}/reports/tax?${PERIOD}`)).json();
    expect(report).toEqual(rest);
    const refused = await svc.reports.tax({ storeId, from: TO, to: FROM }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SvcInvalidRequestError);
    expect((refused as SvcInvalidRequestError).issues.map((issue) => issue.path)).toEqual(['from']);
  });

  it("reads the credential's mode only: test mode's report is the test orders'", async () => {
    const { storeId } = await storeWithOrders();
    const response = await dashboardInMode(
      owner,
      'test',
      'GET',
      `/api/dashboard/stores/${storeId}/reports/tax?${PERIOD}`,
    );
    expect(response.status).toBe(200);
    const report = await response.json();
    expect(report.livemode).toBe(false);
    expect(asExpected(report.rows)).toEqual(expectedTaxReport(MODEL, Date.parse(FROM), Date.parse(TO), false));
  });

  it('wants order:read of a key, and answers nothing of another store', async () => {
    const { storeId } = await storeWithOrders();
    const { id: otherStore } = await createStoreFor(owner);
    const products = await createKeyFor(owner, { scopes: ['product:read'], storeIds: [storeId] });
    const refused = await merchantGet(server.url, products.key, `/stores/${storeId}/reports/tax?${PERIOD}`);
    expect(refused.status).toBe(403);
    expect((await refused.json()).code).toBe('scope_missing');
    const { key } = await createKeyFor(owner, { scopes: ['order:read'], storeIds: [otherStore] });
    const elsewhere = await merchantGet(server.url, key, `/stores/${storeId}/reports/tax?${PERIOD}`);
    expect(elsewhere.status).toBe(403);
    expect((await elsewhere.json()).code).toBe('store_forbidden');
  });

  it('refuses a bad period or format with 400 naming the field', async () => {
    const { id: storeId } = await createStoreFor(owner);
    const { key } = await createKeyFor(owner, { scopes: ['order:read'], storeIds: [storeId] });
    const cases: Array<[string, string]> = [
      // `from` after `to`.
      [`from=2026-05-01T00:00:00Z&to=2026-04-01T00:00:00Z`, 'from'],
      // Over 400 days (401 days), and exactly 400 is fine (below).
      [`from=2025-01-01T00:00:00Z&to=2026-02-06T00:00:00Z`, 'to'],
      [`to=2026-04-01T00:00:00Z`, 'from'],
      [`from=2026-04-01T00:00:00Z`, 'to'],
      [`from=yesterday&to=2026-04-01T00:00:00Z`, 'from'],
      [`from=2026-01-01&to=2026-04-01T00:00:00Z`, 'from'],
      [`${PERIOD}&format=xml`, 'format'],
      [`${PERIOD}&currency=EUR`, 'currency'],
    ];
    for (const [query, field] of cases) {
      const response = await merchantGet(server.url, key, `/stores/${storeId}/reports/tax?${query}`);
      expect(response.status, query).toBe(400);
      const body = await response.json();
      expect(body.code, query).toBe('validation_failed');
      expect(
        body.issues.map((issue: { path: string }) => issue.path),
        query,
      ).toContain(field);
    }
    const longest = await merchantGet(
      server.url,
      key,
      `/stores/${storeId}/reports/tax?from=2025-01-01T00:00:00Z&to=2026-02-05T00:00:00Z`,
    );
    expect(longest.status).toBe(200);
    expect(await longest.json()).toMatchObject({ rows: [], totals: [] });
    // The CSV of a bad period is the same 400, in our JSON error body.
    const csv = await merchantGet(
      server.url,
      key,
      `/stores/${storeId}/reports/tax?from=2026-05-01T00:00:00Z&to=2026-04-01T00:00:00Z&format=csv`,
    );
    expect(csv.status).toBe(400);
    expect((await csv.json()).issues.map((issue: { path: string }) => issue.path)).toEqual(['from']);
  });
});
