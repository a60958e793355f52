/**
 * Rates of tax on digital goods by the buyer's country and the day of the sale (docs/decisions.md,
 * "#42 Tax rates"). Standard rates and their history come from the `sales-tax` package's data
 * (`res/sales_tax_rates.json`: each country's rate now and the rates `before` each change), the EU's
 * members from its `res/region_countries.json`; an update reaches an install as a new version of
 * that package (`npm update sales-tax`, then a release). The reduced rate some EU countries apply
 * to e-books is not in it: EBOOK_RATES below, from the European Commission's TEDB. Rates are
 * integers in parts per million (0.19 is 190 000), so that money never meets a binary fraction.
 */
import { createRequire } from 'node:module';

interface RateEntry {
  type: string;
  rate: number;
  before?: Record<string, RateEntry>;
}

const require = createRequire(import.meta.url);
const RATES = require('sales-tax/res/sales_tax_rates.json') as Record<string, RateEntry>;
const REGIONS = require('sales-tax/res/region_countries.json') as { EU: string[] };

/** The EU's member states (ISO 3166 codes; Greece is `GR`, though its VAT ids say `EL`). */
export const EU_COUNTRIES: ReadonlySet<string> = new Set(REGIONS.EU);

export const PPM = 1_000_000;

/** 0.19 -> 190000, exactly (the package's rates have at most four decimals). */
function toPpm(rate: number): number {
  return Math.round(rate * PPM);
}

interface Period {
  /** The first instant the rate applies (null: since always, as far as the data goes). */
  from: Date | null;
  ppm: number;
}

const HALF_DAY_MS = 12 * 3_600_000;

/**
 * The day a change takes effect, from 00:00 UTC. The package writes a change as the instant of
 * local midnight, not always in the country's summer or winter time (Finland's 1 September 2024 is
 * `2024-08-31T22:00Z`, an hour late): its nearest day is the day the law names.
 */
function changeDay(instant: string): Date {
  const day = new Date(new Date(instant).getTime() + HALF_DAY_MS);
  return new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate()));
}

/** A country's rates as periods, newest first. */
function periods(entry: RateEntry): Period[] {
  // `before[d]`: the rate that applied before instant d. Sorted, each such rate runs from the previous change.
  const changes = Object.entries(entry.before ?? {})
    .map(([at, rate]) => ({ at: changeDay(at), ppm: rate.type === 'none' ? 0 : toPpm(rate.rate) }))
    .sort((a, b) => a.at.getTime() - b.at.getTime());
  const out: Period[] = [];
  let from: Date | null = null;
  for (const change of changes) {
    out.push({ from, ppm: change.ppm });
    from = change.at;
  }
  out.push({ from, ppm: entry.type === 'none' ? 0 : toPpm(entry.rate) });
  return out.reverse();
}

/**
 * E-books supplied electronically, where the country taxes them below its standard rate (Council
 * Directive (EU) 2018/1713 allows it), as the European Commission's Taxes in Europe Database lists
 * them; each with the day it took effect. A country not listed taxes e-books at its standard rate.
 */
const EBOOK_RATES: Record<string, Array<{ from: string; ppm: number }>> = {
  AT: [{ from: '2020-01-01', ppm: 100_000 }],
  BE: [{ from: '2019-04-01', ppm: 60_000 }],
  DE: [{ from: '2019-12-18', ppm: 70_000 }],
  ES: [{ from: '2020-04-23', ppm: 40_000 }],
  FR: [{ from: '2012-04-01', ppm: 55_000 }],
  HR: [{ from: '2018-01-01', ppm: 50_000 }],
  IT: [{ from: '2015-01-01', ppm: 40_000 }],
  LU: [{ from: '2015-01-01', ppm: 30_000 }],
  NL: [{ from: '2019-12-01', ppm: 90_000 }],
  PL: [{ from: '2019-11-01', ppm: 50_000 }],
  PT: [{ from: '2019-01-01', ppm: 60_000 }],
  SE: [{ from: '2019-07-01', ppm: 60_000 }],
  SI: [{ from: '2019-01-01', ppm: 50_000 }],
};

const STANDARD = new Map(Object.entries(RATES).map(([country, entry]) => [country, periods(entry)]));
const EBOOK = new Map(
  Object.entries(EBOOK_RATES).map(([country, list]) => [
    country,
    list.map((p) => ({ from: new Date(`${p.from}T00:00:00Z`), ppm: p.ppm })).reverse(),
  ]),
);

function rateAt(list: Period[] | undefined, at: Date): number | undefined {
  return list?.find((period) => period.from === null || period.from.getTime() <= at.getTime())?.ppm;
}

/** Whether the data knows this country (an ISO 3166-1 alpha-2 code it has a rate for, 0 included). */
export function knownTaxCountry(country: string): boolean {
  return STANDARD.has(country);
}

export type TaxCategory = 'standard' | 'ebook';

/**
 * The rate of a digital good of this category sold to a buyer in `country` at `at`, in parts per
 * million; undefined for a country the data does not know. An e-book's reduced rate only when the
 * country has one then and it is below the standard rate.
 */
export function digitalGoodsRate(country: string, category: TaxCategory, at: Date): number | undefined {
  const standard = rateAt(STANDARD.get(country), at);
  if (standard === undefined || category !== 'ebook') return standard;
  const reduced = rateAt(EBOOK.get(country), at);
  return reduced !== undefined && reduced < standard ? reduced : standard;
}
