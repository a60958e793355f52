/**
 * The buyer's country: the country header set by a trusted proxy (TRUST_PROXY), else a
 * lookup of the IP in geoip-country's bundled database (GeoLite2 data by MaxMind), else `XX`.
 * The database is loaded on first use, not at start-up.
 */
import { createRequire } from 'node:module';

const COUNTRY = /^[A-Z]{2}$/;
const require = createRequire(import.meta.url);
let geoip: { lookup(ip: string): { country?: string } | null } | undefined;

export function countryOfIp(ip: string): string {
  geoip ??= require('geoip-country') as typeof geoip;
  const found = geoip!.lookup(ip)?.country;
  return found && COUNTRY.test(found) ? found : 'XX';
}

/** `proxyCountry` is set only for a request that came through a trusted proxy (trpc/context.ts). */
export function buyerCountry(request: { ip: string; proxyCountry: string | undefined }): string {
  const value = request.proxyCountry?.trim().toUpperCase() ?? '';
  if (COUNTRY.test(value) && value !== 'XX' && value !== 'T1') return value;
  return countryOfIp(request.ip);
}
