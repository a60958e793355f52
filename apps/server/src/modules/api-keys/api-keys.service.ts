/**
 * Merchant API keys: `sk_live_` or `sk_test_` + 40 base62 characters (keys issued before modes,
 * `sk_` + 40, stay live), stored as SHA-256, shown once. A key belongs to a user, is of one mode
 * and lists the stores it may reach; what it may do there is capped at request time by the
 * owner's current membership (access/guards.ts).
 */
import type { TApiKey } from '@svc/schemas';
import { ZCreateApiKeyInput } from '@svc/schemas';
import type { z } from 'zod';
import { AppError, invalidField } from '../../lib/errors.js';
import { randomBase62, safeEqual, sha256Hex } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import type { Context, ServiceContext } from '../request/context.js';
import type { User } from '../identity/identity.entities.js';
import { StoreMemberSchema } from '../stores/stores.entities.js';
import { selectCredential } from './api-keys.repo.js';
import { ApiKeySchema, type ApiKey } from './api-keys.entities.js';

export const API_KEY_PATTERN = /^sk_(?:live_|test_)?[0-9A-Za-z]{40}$/;
/** What the list shows of a key: its mode's part and six characters, enough to recognise it, never to use it. */
const PREFIX_LENGTH = 'sk_live_'.length + 6;
/** lastUsedAt is written at most this often per key, not on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;

export function toApiKeyView(key: ApiKey): TApiKey {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    mode: key.mode,
    scopes: key.scopes as TApiKey['scopes'],
    storeIds: key.storeIds,
    expiresAt: key.expiresAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    createdAt: key.createdAt.toISOString(),
  };
}

export async function createApiKey(
  ctx: ServiceContext,
  user: User,
  input: z.input<typeof ZCreateApiKeyInput>,
): Promise<{ apiKey: TApiKey; key: string }> {
  const now = ctx.clock.now();
  const storeIds = [...new Set(input.storeIds)];
  const memberships = await ctx.em.find(StoreMemberSchema, { user: user.id, store: { $in: storeIds } });
  if (memberships.length !== storeIds.length) {
    throw new AppError('store_forbidden', 'A key can only reach stores you are a member of.');
  }
  if (input.expiresAt && Date.parse(input.expiresAt) <= now.getTime()) {
    throw invalidField('expiresAt', 'Must be in the future.');
  }
  const mode = input.mode ?? 'live';
  const key = `sk_${mode}_${randomBase62(40)}`;
  const apiKey = ctx.em.create(ApiKeySchema, {
    id: newId(),
    user,
    name: input.name,
    mode,
    prefix: key.slice(0, PREFIX_LENGTH),
    keyHash: sha256Hex(key),
    scopes: [...new Set(input.scopes)],
    storeIds,
    expiresAt: input.expiresAt ? new Date(input.expiresAt) : null,
    revokedAt: null,
    lastUsedAt: null,
    createdAt: now,
  });
  await ctx.em.flush();
  return { apiKey: toApiKeyView(apiKey), key };
}

export async function listApiKeys(ctx: ServiceContext, user: User): Promise<TApiKey[]> {
  const keys = await ctx.em.find(ApiKeySchema, { user: user.id }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  return keys.map(toApiKeyView);
}

export async function revokeApiKey(ctx: ServiceContext, user: User, keyId: string): Promise<void> {
  const key = await ctx.em.findOne(ApiKeySchema, { id: keyId, user: user.id });
  if (!key) throw new AppError('not_found', 'API key not found.');
  key.revokedAt ??= ctx.clock.now();
  await ctx.em.flush();
}

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
