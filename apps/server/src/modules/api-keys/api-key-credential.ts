/**
 * The merchant credential a request presents: its Bearer key read, checked and returned with the
 * owner's membership of the store it names. The guards (access/) read it; managing keys is
 * api-keys.service.ts's.
 */
import { safeEqual, sha256Hex } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import type { Context, ServiceContext } from '../request/context.js';
import { ApiKeySchema } from './api-keys.entities.js';
import { selectCredential } from './api-keys.repo.js';

export const API_KEY_PATTERN = /^sk_(?:live_|test_)?[0-9A-Za-z]{40}$/;
/** lastUsedAt is written at most this often per key, not on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** A refused key; the transport adds the Bearer challenge from the route's policy (http/, bearerChallenge). */
function unauthorized(message: string): AppError {
  return new AppError('unauthorized', message);
}

/** A merchant request's key, with its owner's membership of the store the request names. */
export interface MerchantCredential {
  keyId: string;
  /** The key's mode: a merchant call reads and writes only this mode's objects (test mode: docs/architecture.md). */
  livemode: boolean;
  userId: string;
  scopes: string[];
  storeIds: string[];
  /** Null when the key's owner is not (or no longer) a member of the store. */
  member: { role: 'owner' | 'staff'; permissions: string[] } | null;
}

const time = (value: Date | string | null) => (value === null ? null : new Date(value).getTime());

/**
 * The key of a merchant request, or 401 for a missing, malformed, unknown, expired or
 * revoked one. One round trip reads the key and its owner's membership of `storeId`, so a
 * revoked key or a lowered permission counts from the next request.
 */
export async function authenticateApiKey(
  ctx: ServiceContext & Pick<Context, 'caller'>,
  storeId: string,
): Promise<MerchantCredential> {
  const header = ctx.caller.credentials.authorization;
  if (!header) throw unauthorized('Send Authorization: Bearer <API key>.');
  // The scheme name is case-insensitive (RFC 9110 §11.1).
  const match = /^Bearer +(\S+)$/i.exec(header);
  if (!match || !API_KEY_PATTERN.test(match[1]!)) throw unauthorized('Malformed API key.');
  const hash = sha256Hex(match[1]!);
  const row = await selectCredential(ctx.em, hash, storeId);
  // The index found the row by its hash; compare again in constant time all the same.
  if (!row || !safeEqual(row.key_hash, hash)) throw unauthorized('Unknown API key.');
  const now = ctx.clock.now().getTime();
  if (row.revoked_at !== null) throw unauthorized('This API key was revoked.');
  const expiresAt = time(row.expires_at);
  if (expiresAt !== null && expiresAt <= now) throw unauthorized('This API key has expired.');
  const lastUsedAt = time(row.last_used_at);
  if (lastUsedAt === null || now - lastUsedAt >= LAST_USED_RESOLUTION_MS) {
    await ctx.em.nativeUpdate(ApiKeySchema, { id: row.id }, { lastUsedAt: new Date(now) });
  }
  return {
    keyId: row.id,
    livemode: row.mode === 'live',
    userId: row.user_id,
    scopes: row.scopes,
    storeIds: row.store_ids,
    member: row.role ? { role: row.role, permissions: row.permissions ?? [] } : null,
  };
}
