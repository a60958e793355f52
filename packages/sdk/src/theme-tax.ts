/**
 * The cart's tax line as a buyer reads it, for a theme to show it as svc's hosted cart does: the
 * row's label (`VAT 20% (FR)`, `incl. VAT 19% (DE)`, `VAT reverse charge`), its amount, and the
 * total with it. svc works the tax out (`GET /api/v1/cart` answers `taxAmount`, `taxRate`,
 * `taxCountry`); this only words it, adding in the currency's minor units so the total is exact.
 */
import type { Cart } from './theme-cart.js';
import { formatPrice, fromMinor, minor } from './theme-plans.js';

/** What the cart's tax row and total say. */
export interface CartTaxLine {
  /** `VAT 20% (FR)`, `incl. VAT 19% (DE)`, `VAT reverse charge`; `VAT` while no country is known. */
  label: string;
  /** `$2.00`, or `At checkout` when the checkout works it out. */
  amount: string;
  /** The total with the tax, less the coupon's discount: `$12.00`; `$10.00 + VAT` while pending. */
  total: string;
}

type TaxedCart = Pick<
  Cart,
  'currency' | 'subtotal' | 'taxAmount' | 'taxBehavior' | 'taxRate' | 'taxCountry' | 'reverseCharge'
>;

/** Made at the first use: a module-level `new` would stay in every bundle of the theme client, used or not. */
let percent: Intl.NumberFormat | undefined;

/**
 * The tax row of a cart (null while the store's tax is off), with an applied coupon's `discount`
 * (an amount, as `shop.cart.applyCoupon` answers it) taken off the total. Without a known country
 * (the request's could not be told), or with a coupon on a taxed cart, the amount is left to the
 * checkout, which works a coupon's share of the tax out per line: it is never guessed here.
 */
export function cartTaxLine(cart: TaxedCart, discount = 0): CartTaxLine | null {
  if (cart.taxBehavior === 'off') return null;
  const { currency } = cart;
  const money = (units: number) => formatPrice(fromMinor(units, currency), currency);
  const net = Math.max(0, minor(cart.subtotal, currency) - minor(discount, currency));
  const tax = minor(cart.taxAmount, currency);
  if (cart.reverseCharge) return { label: 'VAT reverse charge', amount: money(0), total: money(net) };
  const pending = cart.taxCountry === null || (discount > 0 && tax > 0);
  percent ??= new Intl.NumberFormat('en', { style: 'percent', maximumFractionDigits: 2 });
  const rate = cart.taxRate === null ? '' : ` ${percent.format(cart.taxRate)}`;
  const label = `VAT${rate}${cart.taxCountry ? ` (${cart.taxCountry})` : ''}`;
  const amount = pending ? 'At checkout' : money(tax);
  if (cart.taxBehavior === 'inclusive') return { label: `incl. ${label}`, amount, total: money(net) };
  return { label, amount, total: pending ? `${money(net)} + VAT` : money(net + tax) };
}
