import { decimalPlaces } from '@svc/schemas';
import { invalidField } from './errors.js';

/**
 * The one money type: amounts are integers in minor units everywhere inside the service,
 * and become JSON numbers (at most two decimals) only at the edge.
 */

/** ISO 4217 currencies whose minor unit is not 1/100. */
const EXPONENT: Record<string, number> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
};

export function currencyExponent(currency: string): number {
  return EXPONENT[currency] ?? 2;
}

/**
 * 1999 USD -> 19.99; 500 JPY -> 500. The division is correctly rounded, so it gives exactly the
 * number the decimal text `19.99` parses to (no toFixed round trip needed).
 */
export function minorToAmount(minor: number, currency: string): number {
  const exponent = currencyExponent(currency);
  return exponent === 0 ? minor : minor / 10 ** exponent;
}

/**
 * 19.99 USD -> 1999, refusing amounts finer than the currency allows, exactly: `9.999999999999999`
 * is not 10.00 and `0.30000000000000004` is not 0.30 (decimalPlaces reads the number's decimal
 * text). Once the places are known to fit, the rounding only absorbs the binary product's error.
 */
export function amountToMinor(amount: number, currency: string): number {
  const exponent = currencyExponent(currency);
  // `+ 0`: -0 is 0 minor units.
  const minor = Math.round(amount * 10 ** exponent) + 0;
  if (decimalPlaces(amount) > exponent || !Number.isSafeInteger(minor)) {
    throw new RangeError(`${amount} is not a whole number of ${currency} minor units`);
  }
  return minor;
}

/** An input amount in minor units, or 400 naming `path` when the currency has no such fraction (9.99 JPY). */
export function inputAmountToMinor(amount: number, currency: string, path: string): number {
  try {
    return amountToMinor(amount, currency);
  } catch {
    throw invalidField(path, `Not a whole number of ${currency} minor units.`);
  }
}

/** Currency formats by code (building one costs more than using it; a code is 3 capitals, so few). */
const formats = new Map<string, Intl.NumberFormat>();

function currencyFormat(currency: string): Intl.NumberFormat {
  let format = formats.get(currency);
  if (!format) {
    const exponent = currencyExponent(currency);
    format = new Intl.NumberFormat('en', {
      style: 'currency',
      currency,
      minimumFractionDigits: exponent,
      maximumFractionDigits: exponent,
    });
    formats.set(currency, format);
  }
  return format;
}

/**
 * An amount in minor units as a buyer reads it (1999 USD -> `$19.99`, 500 JPY -> `¥500`, -450 EUR
 * -> `-€4.50`): Intl's currency format with the currency's places from the table above, fed the
 * decimal text made from the integer, so no float is ever rounded on the way.
 */
export function formatMoney(minor: number, currency: string): string {
  const exponent = currencyExponent(currency);
  const digits = String(Math.abs(minor)).padStart(exponent + 1, '0');
  const decimal = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  const text = `${minor < 0 ? '-' : ''}${decimal}`;
  try {
    return currencyFormat(currency).format(text as `${number}`);
  } catch {
    // A code Intl does not take: the amount and the code, still exact.
    return `${text} ${currency}`;
  }
}

/**
 * `amountMinor x part / whole`, rounded half up to a whole minor unit, exactly (in BigInt: a yearly
 * price in minor units times a year in seconds passes 2^53). Proration's one rounding.
 */
export function shareOf(amountMinor: number, part: number, whole: number): number {
  if (!Number.isSafeInteger(amountMinor) || !Number.isSafeInteger(part) || !Number.isSafeInteger(whole))
    throw new RangeError('shareOf takes whole numbers');
  if (whole <= 0 || part < 0 || part > whole) throw new RangeError(`shareOf: ${part} is not a part of ${whole}`);
  const product = BigInt(amountMinor) * BigInt(part);
  const w = BigInt(whole);
  const sign = product < 0n ? -1n : 1n;
  const magnitude = product * sign;
  return Number(sign * ((magnitude * 2n + w) / (2n * w)));
}
