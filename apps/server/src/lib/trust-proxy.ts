/**
 * Which peers are trusted proxies, from TRUST_PROXY. The same function feeds fastify
 * (client IP from X-Forwarded-For) and the checks of headers only a proxy may set
 * (the buyer's country).
 */
import { isIP } from 'node:net';
import { compile } from '@fastify/proxy-addr';
import type { FastifyRequest } from 'fastify';

/** TRUST_PROXY as configured: trust every peer or none, the n nearest hops, or the listed addresses/CIDRs. */
export type TrustProxy = boolean | number | string[];

export type TrustFunction = (address: string, hop: number) => boolean;

export function trustFunction(trust: TrustProxy): TrustFunction {
  if (trust === true) return () => true;
  if (trust === false) return () => false;
  // A hop count: the n nearest hops are proxies (the operator vouches for the topology).
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  const compiled = compile(trust);
  // A peer that is one of the listed addresses, as the socket and the proxies write it, is trusted
  // without parsing it again (proxy-addr parses every address it is asked about, twice a request:
  // the client address and the log line); anything else is for proxy-addr to decide.
  const listed = new Set(
    trust
      .filter((entry) => isIP(entry) !== 0)
      .flatMap((entry) => (isIP(entry) === 6 ? [entry] : [entry, `::ffff:${entry}`])),
  );
  return (address, hop) => listed.has(address) || compiled(address, hop);
}

/** Whether the request came to us through a trusted proxy (its direct peer is one). */
export function viaTrustedProxy(trust: TrustFunction, request: FastifyRequest): boolean {
  const peer = request.socket.remoteAddress;
  return peer !== undefined && trust(peer, 0);
}
