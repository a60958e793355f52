import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { testConfig } from '../../../../test/support/in-process.js';
import type { Config } from '../config.js';
import type { AppDeps } from '../deps.js';
import { resolveCaller } from '../trpc/context.js';
import { buyerCountry, countryOfIp } from './geo.js';

/** The country of a request as the context resolves it (the trusted-proxy check is made there). */
function countryOf(config: Config, peer: string, headers: Record<string, string>, ip = peer): string {
  const request = { id: 'r', headers, ip, socket: { remoteAddress: peer }, cookies: {} } as unknown as FastifyRequest;
  return buyerCountry(resolveCaller({ config } as AppDeps, request));
}

describe('buyerCountry', () => {
  it('takes the country header only from a trusted proxy', () => {
    const behindProxy = testConfig({ TRUST_PROXY: '10.0.0.1' });
    expect(countryOf(behindProxy, '10.0.0.1', { 'cf-ipcountry': 'de' }, '81.2.69.142')).toBe('DE');
    // A client reaching the server directly cannot choose its country.
    expect(countryOf(behindProxy, '81.2.69.142', { 'cf-ipcountry': 'DE' })).toBe('GB');
    expect(countryOf(testConfig(), '81.2.69.142', { 'cf-ipcountry': 'DE' })).toBe('GB');
  });

  it('falls back to the bundled database, then to XX', () => {
    const config = testConfig({ TRUST_PROXY: '10.0.0.1' });
    expect(countryOf(config, '10.0.0.1', { 'cf-ipcountry': 'XX' }, '8.8.8.8')).toBe('US');
    expect(countryOfIp('127.0.0.1')).toBe('XX');
    expect(countryOfIp('not an ip')).toBe('XX');
  });
});
