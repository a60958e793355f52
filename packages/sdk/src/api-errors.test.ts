import { describe, expect, it } from 'vitest';
import {
  SvcApiError,
  SvcAuthenticationError,
  SvcConflictError,
  SvcConnectionError,
  SvcIdempotencyError,
  SvcInvalidRequestError,
  SvcNotFoundError,
  SvcPermissionError,
  SvcRateLimitError,
  apiErrorFor,
} from './api-errors.js';
import { createCustomerClient } from './customer.js';
import { SvcError, isSvcError } from './errors.js';
import { createLicenseClient } from './licenses.js';
import { createMerchantClient } from './merchant.js';
import { createThemeClient } from './theme.js';

describe('API errors, one subclass per row', () => {
  const rows = [
    [400, SvcInvalidRequestError, 'SvcInvalidRequestError', 'invalid_request'],
    [401, SvcAuthenticationError, 'SvcAuthenticationError', 'authentication'],
    [403, SvcPermissionError, 'SvcPermissionError', 'permission'],
    [404, SvcNotFoundError, 'SvcNotFoundError', 'not_found'],
    [409, SvcConflictError, 'SvcConflictError', 'conflict'],
    [422, SvcIdempotencyError, 'SvcIdempotencyError', 'idempotency'],
    [429, SvcRateLimitError, 'SvcRateLimitError', 'rate_limit'],
    [500, SvcApiError, 'SvcApiError', 'api'],
    [503, SvcApiError, 'SvcApiError', 'api'],
    [undefined, SvcConnectionError, 'SvcConnectionError', 'connection'],
  ] as const;

  it.each(rows)('status %s is %s', (status, Class, name, type) => {
    const error = apiErrorFor({ status, code: 'not_found', message: 'No such order.', procedure: 'orders.get' });
    expect(error).toBeInstanceOf(Class);
    expect(error).toBeInstanceOf(SvcApiError);
    expect(error).toBeInstanceOf(SvcError);
    expect(error).toBeInstanceOf(Error);
    expect(isSvcError(error)).toBe(true);
    expect(error.name).toBe(name);
    expect(Class.name).toBe(name);
    expect(error.type).toBe(type);
    expect(error.message).toBe('No such order.');
    expect(error.procedure).toBe('orders.get');
    expect(String(error)).toBe(`${name}: No such order.`);
  });

  it('keeps the answer’s details on the subclass', () => {
    const error = new SvcRateLimitError({
      status: 429,
      code: 'rate_limited',
      message: 'Too many requests.',
      retryAfter: 7,
      requestId: 'req-1',
      procedure: 'orders.list',
    });
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 7, requestId: 'req-1', issues: [] });
    expect(error).not.toBeInstanceOf(SvcNotFoundError);
  });
});

describe('baseUrl', () => {
  // The clients add `/trpc` themselves; a base ending in /api used to fail only at the first call,
  // as a 404 or connection error, so construction refuses it and names the address meant.
  it.each([
    ['https://shop.example.com/api', 'https://shop.example.com'],
    ['https://shop.example.com/api/', 'https://shop.example.com'],
    ['http://localhost:3000/svc/api/', 'http://localhost:3000/svc'],
  ])('refuses %s at construction', (given, meant) => {
    const message = `baseUrl is the service's address without /api (${meant}); got "${given}".`;
    const constructions = [
      () => createMerchantClient({ baseUrl: given, apiKey: 'sk_test_abcdefghijklmnopqrstuvwxyz' }),
      () => createThemeClient({ baseUrl: given, subdomain: 'acme' }),
      () => createCustomerClient({ baseUrl: given, storeId: 'store1' }),
      () => createLicenseClient({ baseUrl: given, productId: 'prod1' }),
    ];
    for (const construct of constructions) {
      let thrown: unknown;
      try {
        construct();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(SvcApiError);
      expect(thrown).toMatchObject({ code: 'invalid_base_url', message });
    }
  });

  it.each([
    'https://shop.example.com',
    'https://shop.example.com/',
    'http://localhost:3000/svc',
    'https://x.example/apis',
  ])('accepts %s', (given) => {
    expect(() => createThemeClient({ baseUrl: given, subdomain: 'acme' })).not.toThrow();
  });
});
