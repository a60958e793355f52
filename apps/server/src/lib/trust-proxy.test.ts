import { describe, expect, it } from 'vitest';
import { trustFunction } from './trust-proxy.js';

describe('trustFunction', () => {
  it('trusts a listed address as the socket or a proxy writes it, IPv4-mapped too', () => {
    const trust = trustFunction(['127.0.0.1', '10.0.0.0/8', '::1']);
    expect(trust('127.0.0.1', 0)).toBe(true);
    expect(trust('::ffff:127.0.0.1', 0)).toBe(true);
    expect(trust('::1', 0)).toBe(true);
    expect(trust('10.1.2.3', 1)).toBe(true);
    expect(trust('::ffff:10.1.2.3', 1)).toBe(true);
    expect(trust('192.0.2.7', 1)).toBe(false);
    expect(trust('127.0.0.2', 0)).toBe(false);
    expect(trust('not an address', 0)).toBe(false);
  });

  it('knows proxy-addr’s names for ranges', () => {
    const trust = trustFunction(['loopback']);
    expect(trust('127.0.0.5', 0)).toBe(true);
    expect(trust('loopback', 0)).toBe(false);
    expect(trust('192.0.2.7', 0)).toBe(false);
  });

  it('counts hops, or trusts all or none', () => {
    expect(trustFunction(2)('192.0.2.7', 1)).toBe(true);
    expect(trustFunction(2)('192.0.2.7', 2)).toBe(false);
    expect(trustFunction(true)('192.0.2.7', 9)).toBe(true);
    expect(trustFunction(false)('127.0.0.1', 0)).toBe(false);
  });
});
