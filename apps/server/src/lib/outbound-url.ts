/**
 * Where the service may send requests (webhook receivers). In production: https only, and
 * every address the host resolves to must be public; the check is repeated at send time
 * and the connection goes to the address that was checked (no DNS rebinding). Outside
 * production: https anywhere, http only to loopback.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { AppError } from './errors.js';

const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4], ['255.255.255.255', 32],
] as const) BLOCKED.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['100::', 64], ['2001::', 23], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) BLOCKED.addSubnet(network, prefix, 'ipv6');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`), else the address. */
function unmap(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

export function isPublicAddress(raw: string): boolean {
  const { address, family } = unmap(raw);
  if (family === 'ipv6' && /^::ffff:/i.test(address)) return false; // mapped in another spelling
  return !BLOCKED.check(address, family);
}

export function isLoopbackAddress(raw: string): boolean {
  const { address, family } = unmap(raw);
  return LOOPBACK.check(address, family);
}

const refuse = (message: string) => new AppError('url_not_allowed', message);

/** Checks the URL's form (scheme, credentials, length); throws 400 url_not_allowed. */
export function parseReceiverUrl(value: string, production: boolean): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse('Not an absolute URL.');
  }
  if (value.length > 2048) throw refuse('At most 2048 characters.');
  if (url.username || url.password) throw refuse('No credentials in the URL.');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('Only https is allowed.');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (url.protocol === 'http:' && (production || !(isIP(host) ? isLoopbackAddress(host) : host === 'localhost'))) {
    throw refuse(production ? 'Only https is allowed.' : 'http is allowed only to loopback outside production.');
  }
  return url;
}

export interface ResolvedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

/** Resolves the receiver and checks every address it has; the caller connects to `address`. */
export async function resolveReceiver(url: URL, production: boolean): Promise<ResolvedTarget> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host)
    ? [{ address: host, family: isIP(host) as 4 | 6 }]
    : ((await lookup(host, { all: true, verbatim: true }).catch(() => [])) as Array<{ address: string; family: number }>);
  if (addresses.length === 0) throw refuse('The host does not resolve.');
  if (production) {
    const blocked = addresses.find((a) => !isPublicAddress(a.address));
    if (blocked) throw refuse('The host resolves to an address that is not public.');
  }
  const first = addresses[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
