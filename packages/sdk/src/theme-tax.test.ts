import { describe, expect, it } from 'vitest';
import { cartTaxLine } from './theme-tax.js';

/** A cart as `GET /api/v1/cart` answers it, tax off; each case sets the tax fields it is about. */
const cart = {
  currency: 'USD',
  subtotal: 10.1,
  taxAmount: 0,
  taxBehavior: 'off',
  taxRate: null,
  taxCountry: null,
  reverseCharge: false,
} as const;

describe('the cart’s tax line, as the hosted cart and the starter theme word it', () => {
  it('is absent while the store charges no tax', () => {
    expect(cartTaxLine(cart)).toBeNull();
  });

  it('adds exclusive tax to the total, exactly: 10.10 + 2.02 is 12.12', () => {
    const taxed = { ...cart, taxBehavior: 'exclusive', taxRate: 0.2, taxCountry: 'FR', taxAmount: 2.02 } as const;
    expect(cartTaxLine(taxed)).toEqual({ label: 'VAT 20% (FR)', amount: '$2.02', total: '$12.12' });
    // 0.1 + 0.2 in floating point is 0.30000000000000004; in cents it is 30.
    expect(cartTaxLine({ ...taxed, subtotal: 0.1, taxAmount: 0.2 })?.total).toBe('$0.30');
  });

  it('says an inclusive price already holds the tax: the total is the subtotal', () => {
    const inclusive = { ...cart, taxBehavior: 'inclusive', taxRate: 0.19, taxCountry: 'DE', taxAmount: 1.61 } as const;
    expect(cartTaxLine(inclusive)).toEqual({ label: 'incl. VAT 19% (DE)', amount: '$1.61', total: '$10.10' });
  });

  it('names a reverse charge, with no tax in the total', () => {
    const b2b = {
      ...cart,
      taxBehavior: 'exclusive',
      taxRate: 0,
      taxCountry: 'FR',
      reverseCharge: true,
    } as const;
    expect(cartTaxLine(b2b)).toEqual({ label: 'VAT reverse charge', amount: '$0.00', total: '$10.10' });
  });

  it('leaves the amount to the checkout without a country, or with a coupon on a taxed cart', () => {
    const unknown = { ...cart, taxBehavior: 'exclusive', taxRate: null, taxCountry: null } as const;
    expect(cartTaxLine(unknown)).toEqual({ label: 'VAT', amount: 'At checkout', total: '$10.10 + VAT' });
    const taxed = { ...cart, taxBehavior: 'exclusive', taxRate: 0.2, taxCountry: 'FR', taxAmount: 2.02 } as const;
    expect(cartTaxLine(taxed, 1.1)).toEqual({ label: 'VAT 20% (FR)', amount: 'At checkout', total: '$9.00 + VAT' });
    // A discount larger than the cart leaves nothing to pay, never a negative total.
    expect(cartTaxLine({ ...taxed, taxBehavior: 'inclusive' }, 50)?.total).toBe('$0.00');
  });

  it('writes a currency without minor units as such', () => {
    const yen = {
      ...cart,
      currency: 'JPY',
      subtotal: 1000,
      taxBehavior: 'exclusive',
      taxRate: 0.1,
      taxCountry: 'FR',
      taxAmount: 100,
    } as const;
    expect(cartTaxLine(yen)).toEqual({ label: 'VAT 10% (FR)', amount: '¥100', total: '¥1,100' });
  });
});
