/**
 * Where the service may send requests (webhook receivers). In production: https only, and
 * every address the host resolves to must be public; the check is repeated at send time
 * and the connection goes to the address that was checked (no DNS rebinding). Outside
 * production: https anywhere, http only to loopback.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { AppError } from './errors.js';

const BLOCKED_V4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
  ['255.255.255.255', 32],
] as const)
  BLOCKED_V4.addSubnet(network, prefix, 'ipv4');

/**
 * Ranges inside global unicast (2000::/3) that are not the public internet: IETF protocol
 * assignments (2001::/23: Teredo 2001::/32, benchmarking 2001:2::/48, ORCHID), documentation
 * (2001:db8::/32, 3fff::/20). 6to4 (2002::/16) is checked by the IPv4 address it embeds.
 */
const BLOCKED_GLOBAL_V6 = new BlockList();
for (const [network, prefix] of [
  ['2001::', 23],
  ['2001:db8::', 32],
  ['3fff::', 20],
] as const)
  BLOCKED_GLOBAL_V6.addSubnet(network, prefix, 'ipv6');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`), else the address. */
function unmap(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/** An IPv6 address (any spelling node accepts: `::` compression, an IPv4 tail, a zone) as 128 bits. */
export function ipv6Bits(raw: string): bigint {
  const address = raw.replace(/%.*$/, '');
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const hex = tail
    ? `${address.slice(0, tail.index)}${((Number(tail[1]) << 8) | Number(tail[2])).toString(16)}:${((Number(tail[3]) << 8) | Number(tail[4])).toString(16)}`
    : address;
  const [head, rest] = hex.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = rest ? rest.split(':') : [];
  const groups =
    rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.reduce((bits, group) => (bits << 16n) | BigInt(parseInt(group || '0', 16)), 0n);
}

function ipv4Of(bits: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => Number((bits >> shift) & 0xffn)).join('.');
}

function isPublicIPv4(address: string): boolean {
  return !BLOCKED_V4.check(address, 'ipv4');
}

/**
 * Whether the address is on the public internet. IPv6 must be global unicast (2000::/3), which
 * leaves out the unspecified and loopback addresses, IPv4-mapped and IPv4-compatible forms, NAT64
 * (64:ff9b::/96, 64:ff9b:1::/48), discard-only, unique-local, site-local, link-local and
 * multicast; and inside it, not one of the special-purpose ranges above, nor 6to4 of an address
 * that is not public IPv4.
 */
export function isPublicAddress(raw: string): boolean {
  const family = isIP(raw.replace(/%.*$/, ''));
  if (family === 4) return isPublicIPv4(raw);
  if (family !== 6) return false;
  const bits = ipv6Bits(raw);
  if (bits >> 125n !== 1n) return false; // not 2000::/3
  if (BLOCKED_GLOBAL_V6.check(raw.replace(/%.*$/, ''), 'ipv6')) return false;
  if (bits >> 112n === 0x2002n) return isPublicIPv4(ipv4Of((bits >> 80n) & 0xffffffffn)); // 6to4
  return true;
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
    : ((await lookup(host, { all: true, verbatim: true }).catch(() => [])) as Array<{
        address: string;
        family: number;
      }>);
  if (addresses.length === 0) throw refuse('The host does not resolve.');
  if (production) {
    const blocked = addresses.find((a) => !isPublicAddress(a.address));
    if (blocked) throw refuse('The host resolves to an address that is not public.');
  }
  const first = addresses[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
