/**
 * Who may see and buy a store's test products (docs/decisions.md, "Test mode needs the seller").
 * Test products hold the seller's real goods (keys, files, instructions), so only the seller's
 * side reaches them on the public routes: a member's dashboard session (the storefront pages), a
 * test API key of the store, or a preview token of the store (stores/preview-token.ts). Anyone
 * else gets the live store: the catalog's `mode=test` shows the live products, and a test
 * product's id is as unknown as any other. Once a test order exists, its checkout token opens it
 * as for any order.
 */
import { AppError } from '../../lib/errors.js';
import { authenticateApiKey } from '../api-keys/api-key-credential.js';
import type { Context } from '../request/context.js';
import { findMembership, meetsTwoFactorPolicy } from '../stores/membership.js';
import { checkPreviewToken, PREVIEW_PREFIX, signPreviewToken, type PreviewCheck } from '../stores/preview-token.js';
import { authenticateSession } from './guards.js';

/** Whether this request may see and buy the test products of a store (by its id). */
export type TestModeAccess = (storeId: string) => Promise<boolean>;

/** Nobody: what a call without a request (a job, the demo seed) gets. */
export const NO_TEST_MODE: TestModeAccess = () => Promise.resolve(false);

const PREVIEW_REFUSALS: Record<Exclude<PreviewCheck, { ok: true }>['reason'], string> = {
  invalid: 'This preview token is not valid.',
  expired: 'This preview token has expired: get a new one (the dashboard’s View store in test mode).',
  other_store: 'This preview token is for another store.',
};

/**
 * The test mode access of an API call (catalog, cart, checkout): its `Authorization: Bearer`
 * credential, read only when test products are at stake, once per store. Without one the caller
 * is a stranger (false). A credential that does not open this store's test mode is 401: a test
 * key of the store (`sk_test_`, any scope) and a preview token of the store do; a live key, a key
 * or token of another store, an expired or forged token do not.
 */
export function testModeAccess(ctx: Context): TestModeAccess {
  const decided = new Map<string, Promise<boolean>>();
  return (storeId) => {
    let decision = decided.get(storeId);
    if (!decision) decided.set(storeId, (decision = decide(ctx, storeId)));
    return decision;
  };
}

async function decide(ctx: Context, storeId: string): Promise<boolean> {
  const header = ctx.caller.credentials.authorization;
  if (header === undefined) return false;
  const token = /^Bearer +(\S+)$/i.exec(header)?.[1];
  const refuse = (message: string) => {
    ctx.answer.headers['WWW-Authenticate'] = 'Bearer realm="svc", error="invalid_token"';
    return new AppError('unauthorized', message);
  };
  if (token?.startsWith(PREVIEW_PREFIX)) {
    const check = checkPreviewToken(ctx, token, storeId);
    if (!check.ok) throw refuse(PREVIEW_REFUSALS[check.reason]);
    return true;
  }
  // A merchant key: 401 when it is no key of ours (unknown, revoked, expired, malformed).
  const credential = await authenticateApiKey(ctx, storeId);
  if (credential.livemode)
    throw refuse('Test products need a test key (sk_test_…) or a preview token, not a live key.');
  if (!credential.storeIds.includes(storeId) || !credential.member)
    throw refuse('This test key may not reach this store.');
  return true;
}

/**
 * The test mode access of a storefront page (a browser): the preview token of the svc_preview
 * cookie (set when the page was opened with `?preview=`), or a signed-in member's session. Never
 * refuses: without them, or with a token that no longer works, the page shows the live store.
 * `token` is what the page hands its cart module for the API calls: the cookie's, or for a
 * session one made for the hour (the same all hour, so the page and its ETag stay the same; it
 * works for one to two hours).
 */
export async function pageTestModeAccess(
  ctx: Context,
  storeId: string,
): Promise<{ allowed: false } | { allowed: true; token: string }> {
  const cookie = ctx.caller.credentials.preview;
  if (cookie !== undefined && checkPreviewToken(ctx, cookie, storeId).ok) return { allowed: true, token: cookie };
  if (!(await isMemberSession(ctx, storeId))) return { allowed: false };
  const hour = 3600_000;
  const expiresAt = new Date((Math.floor(ctx.clock.now().getTime() / hour) + 2) * hour);
  return { allowed: true, token: signPreviewToken(ctx, storeId, expiresAt) };
}

/**
 * Whether a storefront page's browser is signed in to the dashboard as a member of the store (its
 * svc_session cookie) whom the owner's two-factor policy lets in: a member it shuts out of the
 * dashboard sees no test products either. Never refuses: a missing, expired or foreign session is
 * simply not one.
 */
export async function isMemberSession(ctx: Context, storeId: string): Promise<boolean> {
  if (ctx.caller.credentials.sessionToken === undefined) return false;
  const session = await authenticateSession(ctx, { unsafe: false, csrf: 'none' }).catch((error: unknown) => {
    if (error instanceof AppError) return undefined;
    throw error;
  });
  const member = session ? await findMembership(ctx, storeId, session.user.id) : null;
  return !!session && !!member && meetsTwoFactorPolicy(member, session.user);
}
