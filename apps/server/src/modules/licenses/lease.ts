/**
 * Offline license leases (docs/decisions.md, #41 Offline license leases): a valid license's
 * activate and validate answer a compact JWS (RFC 7515) signed with the store's Ed25519 key for the
 * license's mode (`alg: EdDSA`, RFC 8037), which the merchant's software keeps and verifies at
 * every launch without calling home, until its `exp`. Any JOSE library verifies it against the
 * store's JWKS (`GET /api/v1/licenses/jwks/{storeId}`); the SDK's `verifyLicenseLease` does with
 * WebCrypto.
 *
 * Keys: one current key per store and mode, made on first use, its private half sealed at rest.
 * A process keeps the current key it read for a minute (the hot path signs without a query); a
 * rotation elsewhere is seen within that minute, and what was signed meanwhile with the old key
 * still verifies, since the JWKS publishes a retired key until the longest lease it can have
 * signed (LICENSE_LEASE_DAYS_MAX) is over.
 */
import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import {
  LICENSE_LEASE_DAYS_MAX,
  type TLeaseJwk,
  type TLeaseJwks,
  type TLicenseSigningKey,
  type TLicenseStatus,
} from '@svc/schemas';
import type { Config } from '../../config.js';
import { deriveKey, seal, unseal } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { ServiceContext } from '../request/context.js';
import { inTransaction } from '../request/transaction.js';
import { StoreSchema } from '../stores/stores.entities.js';
import { LicenseSigningKeySchema, type LicenseSigningKey } from './licenses.entities.js';

const DAY_MS = 86_400_000;
/** How long a process signs with the current key it read before reading it again. */
const KEY_CACHE_MS = 60_000;
/** The JWS header's `typ`: what the token is, so a lease is never taken for another JWT. */
export const LEASE_TYP = 'svc-lease+jwt';

/** What a lease says. Times are seconds since the epoch (RFC 7519 NumericDate). */
export interface LeaseClaims {
  iss: string;
  /** The license. */
  sub: string;
  productId: string;
  instanceId: string | null;
  livemode: boolean;
  status: TLicenseStatus;
  iat: number;
  exp: number;
}

/** What a lease is made of: the license as the License API's statement judged it. */
export interface LeaseSubject {
  licenseId: string;
  productId: string;
  storeId: string;
  livemode: boolean;
  instanceId: string | null;
  /** The license's access end (its subscription's, or its validity's); null for never. */
  expiresAt: Date | null;
  /** The store's licenseLeaseDays. */
  leaseDays: number;
  /** The time the license was judged at: a test subscription's clock, else now. */
  at: Date;
  /** The service's clock: when the lease is signed. */
  now: Date;
}

interface CurrentKey {
  kid: string;
  privateKey: KeyObject;
  readAt: number;
}

const current = new Map<string, CurrentKey>();
const cacheKey = (storeId: string, livemode: boolean) => `${storeId}:${livemode ? 'live' : 'test'}`;

const sealKey = (config: Config) => deriveKey(config.encryptionKey, 'license-signing-key');

function toSigningKeyView(key: LicenseSigningKey): TLicenseSigningKey {
  return {
    kid: key.id,
    livemode: key.livemode,
    publicKey: key.publicKey,
    createdAt: key.createdAt.toISOString(),
    retiredAt: key.retiredAt?.toISOString() ?? null,
    publishedUntil: key.publishedUntil?.toISOString() ?? null,
  };
}

/** A new Ed25519 key pair as a row: the public key raw (base64url), the private key's PKCS#8 sealed. */
function newKeyRow(config: Config, storeId: string, livemode: boolean, now: Date) {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x!;
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
  return {
    id: newId(),
    store: storeId,
    livemode,
    publicKey: x,
    privateKeySealed: seal(sealKey(config), pkcs8),
    createdAt: now,
    retiredAt: null,
    publishedUntil: null,
  };
}

/** The store's current key for the mode, made when it has none (two racing first uses leave one: the partial unique index). */
async function currentKeyRow(ctx: ServiceContext, storeId: string, livemode: boolean): Promise<LicenseSigningKey> {
  const em = ctx.deps.orm.em.fork();
  const found = await em.findOne(LicenseSigningKeySchema, { store: storeId, livemode, retiredAt: null });
  if (found) return found;
  try {
    const row = em.create(LicenseSigningKeySchema, newKeyRow(ctx.deps.config, storeId, livemode, ctx.clock.now()));
    await em.flush();
    return row;
  } catch (error) {
    if (!(error instanceof UniqueConstraintViolationException)) throw error;
    return ctx.deps.orm.em.fork().findOneOrFail(LicenseSigningKeySchema, { store: storeId, livemode, retiredAt: null });
  }
}

async function signingKey(ctx: ServiceContext, storeId: string, livemode: boolean): Promise<CurrentKey> {
  const key = cacheKey(storeId, livemode);
  const cached = current.get(key);
  const wall = Date.now();
  if (cached && wall - cached.readAt < KEY_CACHE_MS) return cached;
  const row = await currentKeyRow(ctx, storeId, livemode);
  const pkcs8 = Buffer.from(unseal(sealKey(ctx.deps.config), row.privateKeySealed), 'base64');
  const fresh = {
    kid: row.id,
    privateKey: createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }),
    readAt: wall,
  };
  current.set(key, fresh);
  return fresh;
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/**
 * The claims of a lease on `subject`: issued now, `exp` the earlier of the store's lease days and
 * the access the license has left when judged. A test subscription is judged at its clock, but its
 * lease is dated in real time (the access it has left at its clock, from now): software checks a
 * lease against its own real clock, and a lease dated at a clock advanced months ahead would run
 * that far past the 90 days a retired key stays published.
 */
export function leaseClaims(subject: LeaseSubject, issuer: string): LeaseClaims {
  const now = subject.now.getTime();
  const iat = Math.floor(now / 1000);
  const byDays = iat + subject.leaseDays * 86_400;
  const accessEnd = subject.expiresAt
    ? Math.floor((subject.expiresAt.getTime() - subject.at.getTime() + now) / 1000)
    : byDays;
  return {
    iss: issuer,
    sub: subject.licenseId,
    productId: subject.productId,
    instanceId: subject.instanceId,
    livemode: subject.livemode,
    status: 'active',
    iat,
    exp: Math.min(byDays, accessEnd),
  };
}

/** A lease on a valid license, signed with its store's current key for its mode. */
export async function signLease(ctx: ServiceContext, subject: LeaseSubject): Promise<string> {
  const key = await signingKey(ctx, subject.storeId, subject.livemode);
  const header = base64url(JSON.stringify({ alg: 'EdDSA', typ: LEASE_TYP, kid: key.kid }));
  const payload = base64url(JSON.stringify(leaseClaims(subject, ctx.deps.config.publicUrl)));
  const input = `${header}.${payload}`;
  return `${input}.${sign(null, Buffer.from(input), key.privateKey).toString('base64url')}`;
}

function toJwk(key: LicenseSigningKey): TLeaseJwk {
  return { kty: 'OKP', crv: 'Ed25519', x: key.publicKey, kid: key.id, alg: 'EdDSA', use: 'sig' };
}

/**
 * The store's JWKS: the current key of each mode (made now if the store has none yet, so a
 * JWKS fetched before the first lease already holds the key that will sign it) and every retired
 * key still published. Oldest first.
 */
export async function storeJwks(ctx: ServiceContext, storeId: string): Promise<TLeaseJwks> {
  const published = () =>
    ctx.deps.orm.em
      .fork()
      .find(
        LicenseSigningKeySchema,
        { store: storeId, $or: [{ publishedUntil: null }, { publishedUntil: { $gt: ctx.clock.now() } }] },
        { orderBy: { createdAt: 'asc', id: 'asc' } },
      );
  // Once both modes have their key (every fetch but a store's first), one read answers it.
  let keys = await published();
  const missing = [true, false].filter((livemode) => !keys.some((k) => k.livemode === livemode && !k.retiredAt));
  if (missing.length > 0) {
    if (!(await ctx.deps.orm.em.fork().count(StoreSchema, { id: storeId })))
      throw new AppError('not_found', 'No store with this id.');
    for (const livemode of missing) await currentKeyRow(ctx, storeId, livemode);
    keys = await published();
  }
  return { keys: keys.map(toJwk) };
}

/** The store's signing keys of the context's mode as the seller sees them (the dashboard, the merchant API), newest first. */
export async function listSigningKeys(
  ctx: ServiceContext,
  input: { storeId: string },
): Promise<{ keys: TLicenseSigningKey[] }> {
  await currentKeyRow(ctx, input.storeId, ctx.livemode);
  const keys = await ctx.em.find(
    LicenseSigningKeySchema,
    { store: input.storeId, livemode: ctx.livemode },
    { orderBy: { createdAt: 'desc', id: 'desc' } },
  );
  return { keys: keys.map(toSigningKeyView) };
}

/**
 * Rotation: the current key of the context's mode retires (published until no lease it signed can
 * be unexpired) and a new one signs from now on, in this process at once and in others within
 * KEY_CACHE_MS. Answers the new key.
 */
export async function rotateSigningKey(ctx: ServiceContext, input: { storeId: string }): Promise<TLicenseSigningKey> {
  // The current key exists first (made outside the rotation's transaction, as any first use makes it).
  await currentKeyRow(ctx, input.storeId, ctx.livemode);
  const created = await inTransaction(ctx, async (tx) => {
    const now = tx.clock.now();
    const old = await tx.em.findOne(
      LicenseSigningKeySchema,
      { store: input.storeId, livemode: ctx.livemode, retiredAt: null },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (old) {
      old.retiredAt = now;
      // The longest lease, from the last moment a process may still sign with the old key (its cache).
      old.publishedUntil = new Date(now.getTime() + LICENSE_LEASE_DAYS_MAX * DAY_MS + KEY_CACHE_MS);
      // The retirement is written before the new key: one current key at every moment (the partial unique index).
      await tx.em.flush();
    }
    const row = tx.em.create(LicenseSigningKeySchema, newKeyRow(tx.deps.config, input.storeId, ctx.livemode, now));
    await tx.em.flush();
    return row;
  });
  current.delete(cacheKey(input.storeId, ctx.livemode));
  return toSigningKeyView(created);
}
