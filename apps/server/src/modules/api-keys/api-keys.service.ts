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
import { randomBase62, sha256Hex } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import type { ServiceContext } from '../request/context.js';
import type { User } from '../identity/identity.entities.js';
import { meetsTwoFactorPolicy } from '../stores/membership.js';
import { StoreMemberSchema } from '../stores/stores.entities.js';
import { ApiKeySchema, type ApiKey } from './api-keys.entities.js';

/** What the list shows of a key: its mode's part and six characters, enough to recognise it, never to use it. */
const PREFIX_LENGTH = 'sk_live_'.length + 6;

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
  const memberships = await ctx.em.find(
    StoreMemberSchema,
    { user: user.id, store: { $in: storeIds } },
    { populate: ['store'] },
  );
  if (memberships.length !== storeIds.length) {
    throw new AppError('store_forbidden', 'A key can only reach stores you are a member of.');
  }
  // A key works without a person's second factor, so a member the owner's two-factor rule shuts
  // out of the store must not mint one to walk round it.
  const shut = memberships.find((member) => !meetsTwoFactorPolicy(member, user));
  if (shut)
    throw new AppError(
      'two_factor_enrolment_required',
      `${shut.store.getEntity().name} requires two-factor sign-in: turn it on on your Account page before making a key for it.`,
    );
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
