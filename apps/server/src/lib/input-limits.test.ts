import { describe, expect, it } from 'vitest';
import { AppError } from './errors.js';
import {
  assertReadableUrl,
  jsonShapeProblem,
  MAX_JSON_ARRAY_ITEMS,
  MAX_JSON_DEPTH,
  readJsonField,
  unreadableField,
} from './input-limits.js';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const array = (items: number) => `[${Array.from({ length: items }, () => '0').join(',')}]`;

describe('jsonShapeProblem (before parsing)', () => {
  it('takes nesting up to the limit and refuses one level more, in bytes and in text', () => {
    expect(jsonShapeProblem(nested(MAX_JSON_DEPTH))).toBeUndefined();
    expect(jsonShapeProblem(Buffer.from(nested(MAX_JSON_DEPTH)))).toBeUndefined();
    expect(jsonShapeProblem(nested(MAX_JSON_DEPTH + 1))).toMatch(/nested deeper than 32/);
    expect(jsonShapeProblem(Buffer.from(`{"a":${nested(10_000)}}`))).toMatch(/nested deeper/);
  });

  it('takes an array of the limit and refuses one item more, at any depth', () => {
    expect(jsonShapeProblem(array(MAX_JSON_ARRAY_ITEMS))).toBeUndefined();
    expect(jsonShapeProblem(array(MAX_JSON_ARRAY_ITEMS + 1))).toMatch(/more than 50000 items/);
    expect(jsonShapeProblem(`{"a":{"b":${array(100_000)}}}`)).toMatch(/items/);
    // Commas of an object, or of arrays side by side, are not one array's items.
    expect(jsonShapeProblem(`{${Array.from({ length: 20_000 }, (_, i) => `"k${i}":1`).join(',')}}`)).toBeUndefined();
    expect(jsonShapeProblem(`[${Array.from({ length: 3 }, () => array(9_000)).join(',')}]`)).toBeUndefined();
  });

  it('does not count brackets and commas inside strings, escaped quotes included', () => {
    expect(jsonShapeProblem(JSON.stringify({ text: '['.repeat(100) + ','.repeat(20_000) + '\\"[[[' }))).toBeUndefined();
  });
});

describe('unreadableField (after parsing)', () => {
  it('names the first field holding a NUL, a lone surrogate, a non-finite number or -0', () => {
    expect(unreadableField({ name: 'ok', cart: [{ productId: 'a\u0000b' }] })).toEqual({
      path: 'cart.0.productId',
      message: 'Must not contain a NUL character.',
    });
    expect(unreadableField({ name: 'x\uD800y' })).toEqual({
      path: 'name',
      message: 'Must not contain a lone UTF-16 surrogate.',
    });
    expect(unreadableField({ name: 'x\uDC00' })?.path).toBe('name');
    expect(unreadableField({ price: Number.POSITIVE_INFINITY })?.message).toBe('Must be a finite number.');
    expect(unreadableField({ price: -0 })).toEqual({ path: 'price', message: 'Must not be -0.' });
    expect(unreadableField({ meta: { 'a\u0000': 1 } })?.message).toMatch(/^Field name: /);
    expect(unreadableField('\u0000')).toEqual({ path: '', message: 'Must not contain a NUL character.' });
  });

  it('takes every other value: pairs of surrogates (emoji), unicode, zero, null, nested objects', () => {
    expect(
      unreadableField({ name: 'Ünïcödé ✓ 😀', price: 0, n: null, list: [1, 'two', { three: true }] }),
    ).toBeUndefined();
    expect(unreadableField(undefined)).toBeUndefined();
  });
});

describe('assertReadableUrl', () => {
  it('refuses bad percent-encoding, an encoded NUL and encoded lone surrogates with 400 validation_failed', () => {
    for (const url of ['/api/orders/%ff', '/api/x?q=%ff', '/api/x?q=%00', '/api/x?q=%ED%A0%80', '/api/x?q=100%']) {
      let error: unknown;
      try {
        assertReadableUrl(url);
      } catch (caught) {
        error = caught;
      }
      expect(error, url).toBeInstanceOf(AppError);
      expect((error as AppError).appCode, url).toBe('validation_failed');
    }
  });

  it('takes encoded UTF-8 and plain URLs', () => {
    expect(() => assertReadableUrl('/api/x?q=%C3%BC%F0%9F%98%80&r=a+b')).not.toThrow();
    expect(() => assertReadableUrl('/api/orders/abc?limit=10')).not.toThrow();
  });
});

describe('readJsonField (JSON a field carries as text)', () => {
  const refusal = (text: string) => {
    try {
      readJsonField('cart', text);
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).appCode).toBe('validation_failed');
      return (error as AppError).issues;
    }
    throw new Error(`${text} was taken`);
  };

  it('decodes JSON and refuses, naming where, what a JSON body may not hold once decoded', () => {
    expect(readJsonField('cart', '[{"productId":"p","quantity":1}]')).toEqual([{ productId: 'p', quantity: 1 }]);
    expect(refusal('[{"productId":"a\\u0000b","quantity":1}]')).toEqual([
      { path: 'cart.0.productId', message: 'Must not contain a NUL character.' },
    ]);
    expect(refusal('[{"productId":"a\\ud800b","quantity":1}]')).toEqual([
      { path: 'cart.0.productId', message: 'Must not contain a lone UTF-16 surrogate.' },
    ]);
    expect(refusal('[{"productId":"p","quantity":1e309}]')).toEqual([
      { path: 'cart.0.quantity', message: 'Must be a finite number.' },
    ]);
    expect(refusal('[{"a\\u0000":1}]')![0]!.path).toBe('cart.0.a\uFFFD');
    expect(refusal('[{"productId":')).toEqual([{ path: 'cart', message: 'Not JSON.' }]);
    expect(refusal(nested(MAX_JSON_DEPTH + 1))![0]!.path).toBe('cart');
    // Deep enough to overflow a recursive walk, refused before it is parsed.
    expect(refusal(nested(10_000))![0]!.path).toBe('cart');
  });
});
