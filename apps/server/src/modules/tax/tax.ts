/**
 * Working out an order's tax (docs/decisions.md, "#42 Tax"): the store's settings, the buyer's
 * billing country and VAT id, the lines after their share of any discount, and the day. Pure
 * functions of plain data: the cart, checkout, renewals and tests call the same ones.
 *
 * Rounding is per line, half away from zero, in the currency's minor units (what the EU's invoicing
 * rules take: each line's tax is stated and the invoice's tax is their sum). Exclusive: the tax is
 * added to the line. Inclusive: the line's price holds the tax, net = round(gross / (1 + rate)).
 */
import { TAX_SETTINGS_OFF, type TTaxBehavior, type TTaxSettings } from '@svc/schemas';
// A CommonJS module: Node gives its exports as the default import only.
import jsvat from 'jsvat-next';
import { invalidField } from '../../lib/errors.js';
import { digitalGoodsRate, EU_COUNTRIES, PPM, type TaxCategory } from './rates.js';

/** A line as tax sees it: its amount before the discount, and its category. */
export interface TaxableLine {
  amountMinor: number;
  category: TaxCategory;
  /** Whether the order's coupon applies to this line (its discount is shared among these). */
  discounted: boolean;
}

export interface TaxedLine {
  /** The line's share of the discount. */
  discountMinor: number;
  /** Without tax: the amount the tax was worked on (exclusive), or what is left once it is carved out (inclusive). */
  netMinor: number;
  taxMinor: number;
  ratePpm: number;
}

export interface TaxBuyer {
  /** The billing country (ISO 3166-1 alpha-2), or null when the buyer has not said. */
  country: string | null;
  /** The buyer's VAT id, as typed. */
  taxId: string | null;
}

export interface TaxOutcome {
  /** `off` when the store charges no tax (then every other field is empty). */
  behavior: TTaxBehavior;
  country: string | null;
  reverseCharge: boolean;
  /** The VAT id, normalised (`FR40303265045`), when the buyer gave a valid one. */
  taxId: string | null;
  lines: TaxedLine[];
  taxMinor: number;
  /** The order's rate: its lines' when they share one; null when none was worked out or they differ. */
  ratePpm: number | null;
  /** What the buyer pays: the lines less the discount, plus the tax when it is added on top. */
  totalMinor: number;
}

/** n / d rounded half away from zero, for n >= 0 and d > 0, exactly (BigInt: amounts times a million pass 2^53). */
function divRound(n: bigint, d: bigint): bigint {
  return (2n * n + d) / (2n * d);
}

/** The discount shared among the discounted lines in proportion to their amounts, the remainder to the largest parts. */
export function shareDiscount(lines: TaxableLine[], discountMinor: number): number[] {
  const shares = lines.map(() => 0);
  const eligible = lines.map((line, index) => ({ index, amount: line.discounted ? line.amountMinor : 0 }));
  const total = eligible.reduce((sum, line) => sum + line.amount, 0);
  if (discountMinor <= 0 || total <= 0) return shares;
  const exact = eligible.map((line) => ({
    index: line.index,
    floor: Number((BigInt(discountMinor) * BigInt(line.amount)) / BigInt(total)),
    rest: (BigInt(discountMinor) * BigInt(line.amount)) % BigInt(total),
  }));
  let left = discountMinor - exact.reduce((sum, part) => sum + part.floor, 0);
  for (const part of exact) shares[part.index] = part.floor;
  for (const part of [...exact].sort((a, b) => (b.rest > a.rest ? 1 : b.rest < a.rest ? -1 : a.index - b.index))) {
    if (left <= 0) break;
    shares[part.index]! += 1;
    left -= 1;
  }
  return shares;
}

/** One line's tax at `ratePpm` on `baseMinor` (the line after its discount). */
export function lineTax(
  baseMinor: number,
  ratePpm: number,
  behavior: 'exclusive' | 'inclusive',
): { netMinor: number; taxMinor: number } {
  if (ratePpm === 0 || baseMinor === 0) return { netMinor: baseMinor, taxMinor: 0 };
  const base = BigInt(baseMinor);
  if (behavior === 'exclusive')
    return { netMinor: baseMinor, taxMinor: Number(divRound(base * BigInt(ratePpm), BigInt(PPM))) };
  const net = Number(divRound(base * BigInt(PPM), BigInt(PPM + ratePpm)));
  return { netMinor: net, taxMinor: baseMinor - net };
}

/** A VAT id in the form the EU's VIES writes it (`FR 403 032 650 45` -> `FR40303265045`), and its country; 400 naming `taxId` when its format is not valid. */
export function parseVatId(taxId: string): { id: string; country: string } {
  const id = taxId.replace(/[\s.-]/g, '').toUpperCase();
  const result = jsvat.checkVAT(id, jsvat.countries);
  const country = result.country?.isoCode.short;
  if (!result.isValid || !country) throw invalidField('taxId', 'Not a valid VAT id (such as FR40303265045).');
  return { id, country };
}

/** Whether the store charges tax in this country: registered there, or `EU` and an EU country. */
export function registeredIn(settings: TTaxSettings, country: string): boolean {
  return (
    settings.registrations.includes(country) || (settings.registrations.includes('EU') && EU_COUNTRIES.has(country))
  );
}

/**
 * The tax of an order of these lines, sold at `at` to this buyer, under the store's settings.
 * Tax off: nothing is taxed and nothing is asked. Else, in order: a valid EU VAT id of another EU
 * country than the seller's (an EU seller) is a reverse-charge sale at 0; a country the store is not
 * registered in pays no tax; else each line at the country's rate for its category on that day.
 */
export function workOutTax(
  settings: TTaxSettings,
  lines: TaxableLine[],
  discountMinor: number,
  buyer: TaxBuyer,
  at: Date,
): TaxOutcome {
  const shares = shareDiscount(lines, discountMinor);
  const bases = lines.map((line, index) => line.amountMinor - shares[index]!);
  const untaxed = (
    behavior: TTaxBehavior,
    country: string | null,
    reverseCharge: boolean,
    taxId: string | null,
  ): TaxOutcome => ({
    behavior,
    country,
    reverseCharge,
    taxId,
    lines: bases.map((base, index) => ({ discountMinor: shares[index]!, netMinor: base, taxMinor: 0, ratePpm: 0 })),
    taxMinor: 0,
    ratePpm: behavior === 'off' || country === null ? null : 0,
    totalMinor: bases.reduce((sum, base) => sum + base, 0),
  });
  if (settings.behavior === 'off') return untaxed('off', null, false, null);
  const behavior = settings.behavior;
  const vat = buyer.taxId ? parseVatId(buyer.taxId) : null;
  const country = buyer.country;
  if (country === null) return untaxed(behavior, null, false, vat?.id ?? null);
  if (vat && EU_COUNTRIES.has(vat.country) && vat.country !== country) {
    throw invalidField('taxId', `This VAT id is of ${vat.country}; the billing country is ${country}.`);
  }
  const origin = settings.originCountry;
  if (vat && origin && EU_COUNTRIES.has(origin) && EU_COUNTRIES.has(vat.country) && vat.country !== origin) {
    return untaxed(behavior, country, true, vat.id);
  }
  if (!registeredIn(settings, country)) return untaxed(behavior, country, false, vat?.id ?? null);
  const taxed = lines.map((line, index) => {
    const ratePpm = digitalGoodsRate(country, line.category, at) ?? 0;
    return { discountMinor: shares[index]!, ratePpm, ...lineTax(bases[index]!, ratePpm, behavior) };
  });
  const taxMinor = taxed.reduce((sum, line) => sum + line.taxMinor, 0);
  const rates = new Set(taxed.map((line) => line.ratePpm));
  const grossMinor = bases.reduce((sum, base) => sum + base, 0);
  return {
    behavior,
    country,
    reverseCharge: false,
    taxId: vat?.id ?? null,
    lines: taxed,
    taxMinor,
    ratePpm: rates.size === 1 ? [...rates][0]! : null,
    totalMinor: behavior === 'exclusive' ? grossMinor + taxMinor : grossMinor,
  };
}

/** A rate in parts per million as the API's fraction (190000 -> 0.19). */
export function rateFraction(ratePpm: number | null): number | null {
  return ratePpm === null ? null : ratePpm / PPM;
}

/** The order's columns of a worked-out tax (orders.entities.ts): none of it applies while the store's tax is off. */
export function taxColumns(tax: TaxOutcome): {
  taxBehavior: 'exclusive' | 'inclusive' | null;
  taxMinor: number;
  taxRatePpm: number | null;
  taxCountry: string | null;
  reverseCharge: boolean;
  buyerTaxId: string | null;
} {
  return {
    taxBehavior: tax.behavior === 'off' ? null : tax.behavior,
    taxMinor: tax.taxMinor,
    taxRatePpm: tax.ratePpm,
    taxCountry: tax.country,
    reverseCharge: tax.reverseCharge,
    buyerTaxId: tax.taxId,
  };
}

/** A store's stored tax settings (the JSON's `tax`, or null) with the defaults: off. */
export function taxSettingsFrom(stored: Record<string, unknown> | null | undefined): TTaxSettings {
  return stored ? { ...TAX_SETTINGS_OFF, ...(stored as Partial<TTaxSettings>) } : TAX_SETTINGS_OFF;
}

/** An order line's columns of its worked-out tax. */
export function lineTaxColumns(line: TaxedLine): {
  discountMinor: number;
  netMinor: number;
  taxMinor: number;
  taxRatePpm: number;
} {
  return {
    discountMinor: line.discountMinor,
    netMinor: line.netMinor,
    taxMinor: line.taxMinor,
    taxRatePpm: line.ratePpm,
  };
}
