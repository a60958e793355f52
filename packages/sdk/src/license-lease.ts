/**
 * Offline license leases: `activate` and `validate` answer `lease`, a compact JWS (RFC 7515)
 * signed with the store's Ed25519 key (`alg: EdDSA`, RFC 8037). The merchant's software keeps it
 * and, at every launch, verifies it here with no network: the signature against the store's JWKS
 * (fetched once while online, `fetchJwks`), `typ`, `exp` and the product. WebCrypto only
 * (`globalThis.crypto.subtle` with Ed25519: Node 20 or later, Deno, Bun, current browsers, edge
 * runtimes); no dependency. Any JOSE library verifies the same token with the same JWKS.
 *
 * ```ts
 * const claims = await verifyLicenseLease(stored.lease, { jwks: stored.jwks, productId: 'prod123' });
 * // claims.exp: until when this copy runs without calling home
 * ```
 */
import { SvcError } from './errors.js';

export const LEASE_TYP = 'svc-lease+jwt';

export type LeaseInvalidReason =
  /** Not a compact JWS of a lease (three base64url parts, a JSON header and claims, `alg: EdDSA`, `typ: svc-lease+jwt`). */
  | 'malformed'
  /** No key of the JWKS has the lease's `kid`, or the signature does not verify (altered, or another store's). */
  | 'signature'
  /** Past its `exp` (by `now`, with the clock-skew tolerance). */
  | 'expired'
  /** A lease of another product. */
  | 'product';

export class LeaseInvalidError extends SvcError<LeaseInvalidReason> {
  override name = 'LeaseInvalidError';
  readonly reason: LeaseInvalidReason;

  constructor(reason: LeaseInvalidReason, message: string) {
    super(message, { code: reason });
    this.reason = reason;
  }
}

/** A public key of a store's JWKS (`GET /api/v1/licenses/jwks/{storeId}`). */
export interface LeaseJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg?: 'EdDSA';
  use?: 'sig';
}

export interface LeaseJwks {
  keys: LeaseJwk[];
}

/** What a verified lease says. Times are seconds since the epoch. */
export interface LeaseClaims {
  /** The service that issued it (its public URL). */
  iss: string;
  /** The license's id. */
  sub: string;
  productId: string;
  /** The instance it was issued to (activate's, or the one validate named); null without one. */
  instanceId: string | null;
  livemode: boolean;
  status: 'active';
  iat: number;
  /** Until when the software may run on this lease without calling home. */
  exp: number;
}

export interface VerifyLeaseOptions {
  /** The store's JWKS, as `fetchJwks` (or the JWKS route) answered it while online. */
  jwks: LeaseJwks;
  /** The product whose licenses this software accepts. */
  productId: string;
  /** The time to judge `exp` at (a Date or epoch milliseconds); now by default. */
  now?: Date | number;
  /** Seconds of clock skew allowed past `exp` (60 by default, at most 300). */
  clockToleranceSeconds?: number;
}

interface Ed25519Subtle {
  importKey(
    format: 'jwk',
    key: { kty: 'OKP'; crv: 'Ed25519'; x: string },
    algorithm: { name: 'Ed25519' },
    extractable: false,
    usages: ['verify'],
  ): Promise<unknown>;
  verify(algorithm: { name: 'Ed25519' }, key: unknown, signature: Uint8Array, data: Uint8Array): Promise<boolean>;
}

function subtle(): Ed25519Subtle {
  const found = (globalThis as { crypto?: { subtle?: Ed25519Subtle } }).crypto?.subtle;
  if (!found)
    throw new Error(
      '@svc/sdk lease verification needs WebCrypto (globalThis.crypto.subtle) with Ed25519: Node 20 or later, Deno, Bun, a current browser or an edge runtime.',
    );
  return found;
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

function base64urlBytes(part: string): Uint8Array {
  if (!BASE64URL.test(part)) throw new LeaseInvalidError('malformed', 'The lease is not base64url.');
  const base64 = part.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (part.length % 4)) % 4);
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function jsonPart(part: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(base64urlBytes(part)));
  } catch (error) {
    if (error instanceof LeaseInvalidError) throw error;
    throw new LeaseInvalidError('malformed', `The lease's ${what} is not JSON.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new LeaseInvalidError('malformed', `The lease's ${what} is not a JSON object.`);
  return value as Record<string, unknown>;
}

function claimsOf(payload: Record<string, unknown>): LeaseClaims {
  const { iss, sub, productId, instanceId, livemode, status, iat, exp } = payload;
  if (
    typeof iss !== 'string' ||
    typeof sub !== 'string' ||
    typeof productId !== 'string' ||
    !(instanceId === null || typeof instanceId === 'string') ||
    typeof livemode !== 'boolean' ||
    status !== 'active' ||
    typeof iat !== 'number' ||
    typeof exp !== 'number'
  )
    throw new LeaseInvalidError('malformed', "The lease's claims are not a license lease's.");
  return { iss, sub, productId, instanceId, livemode, status, iat, exp };
}

/**
 * Verifies a lease offline and answers its claims, or throws `LeaseInvalidError` with `reason`
 * `malformed`, `signature`, `expired` or `product`. The signature is checked before anything the
 * lease says is believed.
 */
export async function verifyLicenseLease(token: string, options: VerifyLeaseOptions): Promise<LeaseClaims> {
  if (typeof token !== 'string') throw new LeaseInvalidError('malformed', 'The lease is not a string.');
  const parts = token.split('.');
  if (parts.length !== 3) throw new LeaseInvalidError('malformed', 'The lease is not a compact JWS (three parts).');
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = jsonPart(headerPart, 'header');
  if (header.alg !== 'EdDSA' || header.typ !== LEASE_TYP || typeof header.kid !== 'string')
    throw new LeaseInvalidError('malformed', `The lease's header is not an EdDSA ${LEASE_TYP} with a kid.`);
  const jwk = options.jwks?.keys?.find((key) => key.kid === header.kid);
  if (!jwk || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519')
    throw new LeaseInvalidError('signature', `No Ed25519 key "${header.kid}" in the JWKS: a lease of another store?`);
  const crypto = subtle();
  const key = await crypto.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, { name: 'Ed25519' }, false, [
    'verify',
  ]);
  const signed = new TextEncoder().encode(`${headerPart}.${payloadPart}`);
  if (!(await crypto.verify({ name: 'Ed25519' }, key, base64urlBytes(signaturePart), signed)))
    throw new LeaseInvalidError('signature', 'The lease does not verify: it was altered, or signed by another key.');
  const claims = claimsOf(jsonPart(payloadPart, 'claims'));
  const tolerance = Math.min(Math.max(options.clockToleranceSeconds ?? 60, 0), 300);
  const now =
    options.now === undefined ? Date.now() : typeof options.now === 'number' ? options.now : options.now.getTime();
  if (Math.floor(now / 1000) > claims.exp + tolerance)
    throw new LeaseInvalidError('expired', `The lease expired at ${new Date(claims.exp * 1000).toISOString()}.`);
  if (claims.productId !== options.productId)
    throw new LeaseInvalidError('product', `The lease is for product ${claims.productId}, not ${options.productId}.`);
  return claims;
}

/**
 * The store's JWKS, from the service (`baseUrl` as the clients take it, without `/api`): fetch it
 * while online and keep it beside the lease.
 */
export async function fetchJwks(
  baseUrl: string,
  storeId: string,
  init?: { fetch?: typeof fetch; signal?: AbortSignal },
): Promise<LeaseJwks> {
  const url = `${baseUrl.replace(/\/+$/, '')}/api/v1/licenses/jwks/${encodeURIComponent(storeId)}`;
  const response = await (init?.fetch ?? fetch)(url, { signal: init?.signal, headers: { accept: 'application/json' } });
  if (!response.ok)
    throw new SvcError(`The JWKS answered ${response.status}.`, { code: 'jwks_unavailable', status: response.status });
  const jwks = (await response.json()) as LeaseJwks;
  if (!Array.isArray(jwks?.keys)) throw new SvcError('The JWKS has no keys array.', { code: 'jwks_malformed' });
  return jwks;
}
