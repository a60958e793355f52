/**
 * The outbound URL guard's address rule (docs/decisions.md): in production a
 * receiver must be on the public internet, whatever spelling of an address the URL or the DNS
 * answer uses. The same function decides at create (parseReceiverUrl + resolveReceiver) and at
 * send (resolveReceiver on the connection's address).
 */
import { describe, expect, it } from 'vitest';
import { ipv6Bits, isPublicAddress, resolveReceiver } from './outbound-url.js';

const REFUSED: Array<[string, string]> = [
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::8.8.8.8', 'IPv4-compatible (deprecated form, never global unicast)'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex spelling'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ['2002:7f00:1::', '6to4 of loopback'],
  ['2002:a00:1::1', '6to4 of 10.0.0.1'],
  ['2002:c0a8:101::', '6to4 of 192.168.1.1'],
  ['2001:0:7f00:1::', 'Teredo (server 127.0.0.1)'],
  ['2001:0:808:808::1', 'Teredo (any)'],
  ['2001:2::1', 'benchmarking'],
  ['2001:10::1', 'ORCHID'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation (2024)'],
  ['64:ff9b::7f00:1', 'NAT64 of loopback'],
  ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
  ['64:ff9b:1::a00:1', 'local-use NAT64'],
  ['100::1', 'discard-only'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456::1', 'unique-local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local with a zone'],
  ['fec0::1', 'site-local'],
  ['ff02::1', 'multicast'],
  ['127.0.0.1', 'IPv4 loopback'],
  ['169.254.169.254', 'IPv4 link-local (cloud metadata)'],
];

const PUBLIC = ['2606:4700:4700::1111', '2a00:1450:4001:82a::200e', '2002:808:808::1', '1.1.1.1', '8.8.8.8'];

describe('the outbound address rule', () => {
  it.each(REFUSED)('refuses %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(PUBLIC)('accepts %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it('reads every spelling of an IPv6 address to the same bits', () => {
    expect(ipv6Bits('::ffff:127.0.0.1')).toBe(ipv6Bits('::ffff:7f00:1'));
    expect(ipv6Bits('2002:7f00:0001:0:0:0:0:0')).toBe(ipv6Bits('2002:7f00:1::'));
    expect(ipv6Bits('::')).toBe(0n);
    expect(ipv6Bits('::1')).toBe(1n);
  });

  it.each(REFUSED.filter(([address]) => !address.includes('%')))(
    'refuses to send to https://[%s]/ in production',
    async (address) => {
      const host = address.includes(':') ? `[${address}]` : address;
      await expect(resolveReceiver(new URL(`https://${host}/hook`), true)).rejects.toMatchObject({
        appCode: 'url_not_allowed',
      });
    },
  );
});
