import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { testConfig } from '../../../../test/support/in-process.js';
import { buyerCountry, countryOfIp } from './geo.js';

function request(peer: string, headers: Record<string, string>, ip = peer): FastifyRequest {
  return { headers, ip, socket: { remoteAddress: peer } } as unknown as FastifyRequest;
}

describe('buyerCountry', () => {
  it('takes the country header only from a trusted proxy', () => {
    const behindProxy = testConfig({ TRUST_PROXY: '10.0.0.1' });
    expect(buyerCountry(behindProxy, request('10.0.0.1', { 'cf-ipcountry': 'de' }, '81.2.69.142'))).toBe('DE');
    // A client reaching the server directly cannot choose its country.
    expect(buyerCountry(behindProxy, request('81.2.69.142', { 'cf-ipcountry': 'DE' }))).toBe('GB');
    expect(buyerCountry(testConfig(), request('81.2.69.142', { 'cf-ipcountry': 'DE' }))).toBe('GB');
  });

  it('falls back to the bundled database, then to XX', () => {
    const config = testConfig({ TRUST_PROXY: '10.0.0.1' });
    expect(buyerCountry(config, request('10.0.0.1', { 'cf-ipcountry': 'XX' }, '8.8.8.8'))).toBe('US');
    expect(countryOfIp('127.0.0.1')).toBe('XX');
    expect(countryOfIp('not an ip')).toBe('XX');
  });
});
