import { describe, expect, it } from 'vitest';
import { redactUrl } from './logger.js';

describe('redactUrl', () => {
  it('hides credentials carried in the query string, and nothing else', () => {
    expect(redactUrl('/api/orders/abc/delivery?token=SECRET&x=1')).toBe('/api/orders/abc/delivery?token=[redacted]&x=1');
    expect(redactUrl('/api/orders/a/files/b?expires=1&sig=deadbeef')).toBe('/api/orders/a/files/b?expires=1&sig=[redacted]');
    expect(redactUrl('/api/orders/a/keys?email=a%40b.c')).toBe('/api/orders/a/keys?email=[redacted]');
    expect(redactUrl('/api/store/demo')).toBe('/api/store/demo');
  });
});
