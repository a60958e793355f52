/**
 * Authentication and authorisation, as functions of the request context and the route's call
 * (modules/request/context.ts), without the transport: procedures on /trpc and REST and the
 * plain routes call the same ones, so they enforce the same rules: seller sessions (with CSRF as
 * the route declares it), store membership and permissions, merchant API keys (scope, store,
 * permission ceiling, per-key limit), either of the two for a store operation both audiences
 * call (authorizeStoreAccess), the operator's scrape token. Customer sessions are the
 * customers module's (authenticateCustomer).
 */
import type { TApiKeyScope, TStorePermission } from '@svc/schemas';
import { safeEqual, sha256Hex } from '../../lib/crypto.js';
import { AppError, invalidField } from '../../lib/errors.js';
import { authenticateApiKey, type MerchantCredential } from '../api-keys/api-key-credential.js';
import { setSessionCookie } from '../identity/session-cookie.js';
import { resolveSession } from '../identity/sessions.js';
import type { Context, RouteCall } from '../request/context.js';
import { enforceRateLimit } from '../request/rate-limit.js';
import { findMembership, hasPermission, meetsTwoFactorPolicy } from '../stores/membership.js';

/**
 * The dashboard permission each merchant scope is capped by; null: membership alone, as the
 * dashboard asks no permission to see the store itself.
 */
export const SCOPE_CEILING: Record<TApiKeyScope, TStorePermission | null> = {
  'order:read': 'viewOrders',
  'order:update': 'editOrders',
  'order:refund': 'editOrders',
  'webhook:read': 'manageSettings',
  'webhook:write': 'manageSettings',
  'webhook:delete': 'manageSettings',
  'license:read': 'viewOrders',
  'license:write': 'editOrders',
  'subscription:read': 'viewOrders',
  'subscription:write': 'editOrders',
  'product:read': 'manageProducts',
  'product:write': 'manageProducts',
  'coupon:read': 'manageProducts',
  'coupon:write': 'manageProducts',
  'event:read': 'manageSettings',
  'store:read': null,
  'store:write': 'manageSettings',
};

/** The store a route names in its input (path parameter or body field), or 400. */
export function storeIdOf(input: unknown): string {
  const storeId = (input as { storeId?: unknown } | undefined)?.storeId;
  if (typeof storeId !== 'string' || storeId.length === 0) throw invalidField('storeId', 'Required.');
  return storeId;
}

/**
 * The mode a dashboard call reads and writes: `X-Svc-Mode` (test mode: docs/architecture.md), live when
 * absent. Any other value is 400: a typo must not quietly show live data to a seller who asked
 * for test data.
 */
export function dashboardLivemode(ctx: Pick<Context, 'caller'>): boolean {
  const mode = ctx.caller.credentials.mode;
  if (mode === undefined || mode === 'live') return true;
  if (mode === 'test') return false;
  throw new AppError('validation_failed', 'X-Svc-Mode must be live or test.', {
    issues: [{ path: 'X-Svc-Mode', message: 'Must be live or test.' }],
  });
}

/** The signed-in seller of a request; an unsafe call also needs the CSRF token when the route requires it. */
export async function authenticateSession(
  ctx: Pick<Context, 'em' | 'clock' | 'deps' | 'caller' | 'answer'>,
  call: RouteCall,
) {
  const { credentials } = ctx.caller;
  // A Bearer request is never a cookie session, whatever cookies it carries.
  if (credentials.authorization)
    throw new AppError('unauthorized', 'Dashboard routes take the session cookie, not a Bearer key.');
  const token = credentials.sessionToken;
  if (!token) throw new AppError('unauthorized', 'Sign in first.');
  const resolved = await resolveSession(ctx, token);
  if (!resolved) throw new AppError('unauthorized', 'The session has expired; sign in again.');
  if (call.unsafe && call.csrf !== 'exempt') {
    const header = credentials.csrfToken;
    if (typeof header !== 'string' || !safeEqual(header, resolved.session.csrfToken)) {
      throw new AppError('csrf_failed', 'Missing or wrong X-CSRF-Token header.');
    }
  }
  if (resolved.slid) setSessionCookie(ctx.answer, ctx.deps.config, token);
  return { ...resolved, token };
}

/**
 * The signed-in user's membership of the store, holding `permission` when given; 403 otherwise.
 * A store whose owner requires two-factor sign-in refuses a member without it
 * (`two_factor_enrolment_required`), owner included: the policy rides on the membership's own
 * query (the store row is joined), and the user is the one the session loaded, so the rule costs
 * no round trip. Account routes are session routes without a store, so enrolling stays open.
 */
export async function requireMember(
  ctx: Pick<Context, 'em'>,
  user: { id: string; totpEnabledAt?: Date | null | undefined },
  storeId: string,
  permission?: TStorePermission,
  ownerOnly = false,
) {
  const member = await findMembership(ctx, storeId, user.id);
  if (!member) throw new AppError('store_forbidden', 'You are not a member of this store.');
  if (!meetsTwoFactorPolicy(member, user))
    throw new AppError(
      'two_factor_enrolment_required',
      `${member.store.getEntity().name} requires two-factor sign-in: turn it on on your Account page first.`,
    );
  if (ownerOnly && member.role !== 'owner')
    throw new AppError('permission_missing', 'Only the store owner can do this.');
  if (permission && !hasPermission(member, permission)) {
    throw new AppError('permission_missing', `This needs the ${permission} permission.`);
  }
  return member;
}

/**
 * A merchant call: a Bearer key with `scope`, reaching the input's `storeId`, within its owner's
 * current permissions, inside the per-key budget. A request without a key is 401 whatever else
 * is wrong with it; then a missing storeId is 400.
 */
export async function authorizeMerchant(
  ctx: Context,
  scope: TApiKeyScope,
  input: unknown,
): Promise<{ credential: MerchantCredential; storeId: string }> {
  const named = (input as { storeId?: unknown } | undefined)?.storeId;
  const credential = await authenticateApiKey(ctx, typeof named === 'string' ? named : '');
  const storeId = storeIdOf(input);
  await enforceRateLimit(
    ctx,
    { name: 'merchant', max: ctx.deps.config.merchantRateLimitPerMinute, windowMs: 60_000 },
    `key:${credential.keyId}`,
  );
  if (!credential.scopes.includes(scope)) throw new AppError('scope_missing', `This key lacks the ${scope} scope.`);
  // A store that does not exist is answered like one the key may not reach.
  if (!credential.storeIds.includes(storeId))
    throw new AppError('store_forbidden', 'This key may not reach this store.');
  const member = credential.member;
  if (!member) throw new AppError('store_forbidden', 'The key owner is no longer a member of this store.');
  const ceiling = SCOPE_CEILING[scope];
  if (ceiling && !hasPermission(member, ceiling))
    throw new AppError('permission_missing', `The key owner lacks the ${ceiling} permission in this store.`);
  return { credential, storeId };
}

/** Who a store call acts for: a merchant key, or a member signed in to the dashboard. */
export type StoreActor =
  | { kind: 'apiKey'; credential: MerchantCredential }
  | ({ kind: 'session'; member: Awaited<ReturnType<typeof requireMember>> } & Awaited<
      ReturnType<typeof authenticateSession>
    >);

/**
 * A store operation either audience may call: a merchant key with `scope` (as authorizeMerchant:
 * the store, the owner's ceiling, the per-key budget), or a member's session holding `permission`
 * (as a dashboard route: CSRF on an unsafe call, membership, the permission when given).
 * `via` is the one credential the route's path reads (REST binds it: the merchant path the key,
 * the dashboard path the session, each refusing the other as before). Unbound (/trpc), a request
 * with an Authorization header is a key call and any other a session call: a Bearer request is
 * never a cookie session. The call's mode is the credential's: the key's, or the session's
 * X-Svc-Mode.
 */
export async function authorizeStoreAccess(
  ctx: Context,
  access: { scope: TApiKeyScope; permission?: TStorePermission | undefined },
  call: RouteCall,
  input: unknown,
  via: 'apiKey' | 'session' | undefined,
): Promise<{ storeId: string; livemode: boolean; actor: StoreActor }> {
  const credential = via ?? (ctx.caller.credentials.authorization === undefined ? 'session' : 'apiKey');
  if (credential === 'apiKey') {
    const merchant = await authorizeMerchant(ctx, access.scope, input);
    return {
      storeId: merchant.storeId,
      livemode: merchant.credential.livemode,
      actor: { kind: 'apiKey', credential: merchant.credential },
    };
  }
  const session = await authenticateSession(ctx, call);
  const storeId = storeIdOf(input);
  const member = await requireMember(ctx, session.user, storeId, access.permission);
  return { storeId, livemode: dashboardLivemode(ctx), actor: { kind: 'session', ...session, member } };
}

/**
 * The operator's scraper (`/metrics`): `Authorization: Bearer <METRICS_TOKEN>` when the token is
 * configured, else open (the route is served without a token only where that is allowed: outside
 * production, or on the loopback METRICS_PORT). Compared in constant time, as digests, so not even
 * the token's length shows in the timing.
 */
export function authenticateOperator(ctx: Pick<Context, 'deps' | 'caller'>): void {
  const token = ctx.deps.config.metricsToken;
  if (token === undefined) return;
  const header = ctx.caller.credentials.authorization;
  // The scheme name is case-insensitive (RFC 9110 §11.1).
  const given = header === undefined ? undefined : /^Bearer +(\S+)$/i.exec(header)?.[1];
  if (given !== undefined && safeEqual(sha256Hex(given), sha256Hex(token))) return;
  throw new AppError('unauthorized', 'Send Authorization: Bearer <METRICS_TOKEN>.');
}
