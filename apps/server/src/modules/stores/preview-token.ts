/**
 * A store's preview tokens: what lets a browser see and buy the store's test products for an hour
 * (who may, and where they are read: access/test-mode.ts). `svc_preview_<storeId>.<expires>.<signature>`,
 * the signature an HMAC with a subkey of the application key over the store, the mode (`test`)
 * and the expiry. It is no other credential: the merchant API takes `sk_` keys only, the dashboard
 * a session cookie, an order its checkout token. Here, in the stores module, because a token is
 * the store's: `stores.previewToken` makes one for the dashboard's View store link.
 */
import type { TStorePreview } from '@svc/schemas';
import { setCookie } from '../../lib/cookies.js';
import { deriveKey, hmacHex, safeEqual } from '../../lib/crypto.js';
import type { Context, ServiceContext } from '../request/context.js';
import { StoreSchema } from './stores.entities.js';

/** How long a preview token opens a store's test mode. */
export const PREVIEW_TTL_MS = 60 * 60_000;
/** What every preview token begins with. */
export const PREVIEW_PREFIX = 'svc_preview_';
const TOKEN = /^svc_preview_([a-z][0-9a-z]{23})\.([1-9][0-9]{0,11})\.([0-9a-f]{64})$/;

function signature(ctx: Pick<ServiceContext, 'deps'>, storeId: string, expiresSeconds: number): string {
  return hmacHex(deriveKey(ctx.deps.config.encryptionKey, 'preview-token'), `${storeId}.test.${expiresSeconds}`);
}

/** A preview token of the store's test mode, valid until `expiresAt` (whole seconds). */
export function signPreviewToken(ctx: Pick<ServiceContext, 'deps'>, storeId: string, expiresAt: Date): string {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  return `${PREVIEW_PREFIX}${storeId}.${expires}.${signature(ctx, storeId, expires)}`;
}

/** A new preview token of the store, for PREVIEW_TTL_MS. */
export function newPreviewToken(
  ctx: Pick<ServiceContext, 'deps' | 'clock'>,
  storeId: string,
): { token: string; expiresAt: Date } {
  const expiresAt = new Date(Math.floor((ctx.clock.now().getTime() + PREVIEW_TTL_MS) / 1000) * 1000);
  return { token: signPreviewToken(ctx, storeId, expiresAt), expiresAt };
}

export type PreviewCheck = { ok: true; expiresAt: Date } | { ok: false; reason: 'invalid' | 'expired' | 'other_store' };

/** What a preview token says of the store: whether it opens its test mode now, or why not. */
export function checkPreviewToken(
  ctx: Pick<ServiceContext, 'deps' | 'clock'>,
  token: string,
  storeId: string,
): PreviewCheck {
  const match = TOKEN.exec(token);
  if (!match) return { ok: false, reason: 'invalid' };
  const [, tokenStore, expires] = match;
  if (!safeEqual(match[3]!, signature(ctx, tokenStore!, Number(expires)))) return { ok: false, reason: 'invalid' };
  if (tokenStore !== storeId) return { ok: false, reason: 'other_store' };
  const expiresAt = new Date(Number(expires) * 1000);
  if (expiresAt.getTime() <= ctx.clock.now().getTime()) return { ok: false, reason: 'expired' };
  return { ok: true, expiresAt };
}

/**
 * `stores.previewToken`: a new preview token of the store, and the storefront's test mode with it
 * (a path, as `logoUrl` is). The caller is a member of the store (the route's guard).
 */
export async function storePreview(
  ctx: Pick<ServiceContext, 'deps' | 'clock' | 'em'>,
  input: { storeId: string },
): Promise<TStorePreview> {
  const store = await ctx.em.findOneOrFail(StoreSchema, { id: input.storeId });
  const { token, expiresAt } = newPreviewToken(ctx, store.id);
  return {
    token,
    expiresAt: expiresAt.toISOString(),
    url: `/s/${encodeURIComponent(store.subdomain)}?mode=test&preview=${encodeURIComponent(token)}`,
  };
}

/** `svc_preview`: the preview token a storefront page was opened with, for the store's pages only. */
export const PREVIEW_COOKIE = 'svc_preview';

/** Keeps the token for the store's pages (`/s/<subdomain>`) until it expires. */
export function setPreviewCookie(
  ctx: Pick<Context, 'answer' | 'deps' | 'clock'>,
  subdomain: string,
  token: string,
  expiresAt: Date,
): void {
  setCookie(ctx.answer, PREVIEW_COOKIE, token, {
    maxAgeSeconds: Math.max(1, Math.floor((expiresAt.getTime() - ctx.clock.now().getTime()) / 1000)),
    secure: ctx.deps.config.isProduction,
    sameSite: 'Lax',
    path: `/s/${subdomain}`,
  });
}
