/**
 * The error map says each issue as a sentence a seller understands, naming the field; a schema's
 * own message wins; store currencies are ISO 4217 codes only.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ZCreateProductInput, ZUpdateProductInput } from './catalog.js';
import { describeBytes, sellerErrorMap } from './error-map.js';
import { ZCreateStoreInput, ZUpdateStoreInput } from './stores.js';

const messages = (schema: z.ZodType, input: unknown) => {
  const parsed = schema.safeParse(input, { error: sellerErrorMap });
  return parsed.success ? [] : parsed.error.issues.map((issue) => [issue.path.join('.'), issue.message]);
};

describe('sellerErrorMap', () => {
  it('asks for what is missing or empty, by the field’s name', () => {
    expect(messages(ZCreateProductInput, { storeId: 'abc', name: '', deliveryMethods: [] })).toEqual([
      ['name', 'Enter a name.'],
      ['deliveryMethods', 'Choose at least one delivery method.'],
      // A price or plans: checked once the fields are, so it comes last (each issue is at its field).
      ['price', 'Enter a price.'],
    ]);
    expect(messages(ZCreateStoreInput, { subdomain: 'my-shop' })).toEqual([['name', 'Enter a name.']]);
  });

  it('says the limits in words', () => {
    expect(
      messages(ZUpdateStoreInput, { storeId: 'abc', name: 'x'.repeat(101), settings: { paymentMethods: [] } }),
    ).toEqual([
      ['name', 'The name can be at most 100 characters.'],
      ['settings.paymentMethods', 'Choose at least one payment method.'],
    ]);
    expect(messages(ZUpdateProductInput, { storeId: 'abc', productId: 'def', price: -1 })).toEqual([
      ['price', 'The price must be at least 0.'],
    ]);
    expect(messages(ZUpdateProductInput, { storeId: 'abc', productId: 'def', price: 1.005 })).toEqual([
      ['price', 'The price can have at most two decimals.'],
    ]);
    expect(messages(ZUpdateProductInput, { storeId: 'abc', productId: 'def', price: 'ten' })).toEqual([
      ['price', 'The price must be a number.'],
    ]);
    expect(messages(ZCreateStoreInput, { name: 'Shop', subdomain: 'My Shop' })).toEqual([
      ['subdomain', 'Use lowercase letters, digits and hyphens only, not starting or ending with a hyphen.'],
    ]);
  });

  it('says a product’s rules across fields as a sentence', () => {
    expect(messages(ZUpdateProductInput, { storeId: 'abc', productId: 'def', minQuantity: 5, maxQuantity: 2 })).toEqual(
      [['minQuantity', "Minimum quantity can't be above the maximum."]],
    );
  });

  it('takes ISO 4217 currencies only, and says so', () => {
    expect(messages(ZCreateStoreInput, { name: 'Shop', subdomain: 'my-shop', currency: 'EUR' })).toEqual([]);
    expect(messages(ZCreateStoreInput, { name: 'Shop', subdomain: 'my-shop', currency: 'XYZ' })).toEqual([
      ['currency', 'XYZ is not a currency: use an ISO 4217 code such as USD or EUR.'],
    ]);
    expect(messages(ZCreateStoreInput, { name: 'Shop', subdomain: 'my-shop', currency: 'usd' })).toEqual([
      ['currency', 'usd is not a currency: use an ISO 4217 code such as USD or EUR.'],
    ]);
  });

  it('says sizes in the units sellers read', () => {
    expect(describeBytes(1024 * 1024)).toBe('1 MB');
    expect(describeBytes(2 * 1024 * 1024)).toBe('2 MB');
    expect(describeBytes(100 * 1024 * 1024)).toBe('100 MB');
    expect(describeBytes(512 * 1024)).toBe('512 KB');
  });
});
