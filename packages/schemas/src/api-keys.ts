/** Merchant API keys: scoped, store-bound, shown once. */
import { z } from 'zod';
import { ZId, ZSingleLine, ZTimestamp } from './common.js';

export const API_KEY_SCOPES = [
  'order:read',
  'order:update',
  'order:refund',
  'webhook:read',
  'webhook:write',
  'webhook:delete',
  'license:read',
  'license:write',
  'subscription:read',
  'subscription:write',
  'product:read',
  'product:write',
  'coupon:read',
  'coupon:write',
  'event:read',
  'store:read',
  'store:write',
] as const;
export const ZApiKeyScope = z.enum(API_KEY_SCOPES);
export type TApiKeyScope = z.infer<typeof ZApiKeyScope>;

/** A key's mode (test mode: docs/architecture.md): it reads and writes only that mode's objects. */
export const API_KEY_MODES = ['live', 'test'] as const;
export const ZApiKeyMode = z.enum(API_KEY_MODES);
export type TApiKeyMode = z.infer<typeof ZApiKeyMode>;

export const ZCreateApiKeyInput = z.strictObject({
  name: ZSingleLine(100),
  /** `live` (the default) answers `sk_live_…`, `test` answers `sk_test_…`. */
  mode: ZApiKeyMode.default('live'),
  scopes: z.array(ZApiKeyScope).min(1).max(API_KEY_SCOPES.length),
  storeIds: z.array(ZId).min(1).max(100),
  expiresAt: ZTimestamp.optional(),
});

export const ZApiKey = z.object({
  id: z.string(),
  name: z.string(),
  /** The first 10 characters, enough to recognise a key, never enough to use it. */
  prefix: z.string(),
  /** The key's mode; keys issued before modes existed are live. */
  mode: ZApiKeyMode,
  scopes: z.array(ZApiKeyScope),
  storeIds: z.array(z.string()),
  expiresAt: ZTimestamp.nullable(),
  revokedAt: ZTimestamp.nullable(),
  lastUsedAt: ZTimestamp.nullable(),
  createdAt: ZTimestamp,
});
export type TApiKey = z.infer<typeof ZApiKey>;

/** The create answer: the only time the key itself is shown. */
export const ZCreatedApiKey = z.object({ apiKey: ZApiKey, key: z.string() });
export const ZApiKeyList = z.object({ apiKeys: z.array(ZApiKey) });
export const ZApiKeyIdInput = z.strictObject({ keyId: ZId });
