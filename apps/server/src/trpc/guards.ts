/**
 * Authentication and authorisation as procedure middleware, so /trpc and REST enforce the
 * same rules: seller sessions (with CSRF), store membership and permissions, merchant API
 * keys (scope, store, permission ceiling, per-key limit) and customer sessions.
 */
import type { TApiKeyScope, TStorePermission } from '@svc/schemas';
import { AppError, invalidField } from '../lib/errors.js';
import { readCookie, setCookie } from '../lib/cookies.js';
import { safeEqual } from '../lib/crypto.js';
import { authenticateApiKey } from '../modules/api-keys/api-keys.service.js';
import { authenticateCustomer } from '../modules/customers/customers.service.js';
import { SESSION_COOKIE, resolveSession, sessionCookieOptions } from '../modules/identity/sessions.js';
import { findMembership, hasPermission } from '../modules/stores/membership.js';
import type { Context } from './context.js';
import { enforceRateLimit } from './rate-limit.middleware.js';
import { baseProcedure } from './procedures.js';

/** Unsafe requests under these prefixes are not CSRF-checked (DESIGN §5 Sessions). */
export const CSRF_EXEMPT_PREFIXES = ['/api/auth/', '/api/payments/', '/api/embed/', '/api/checkout/', '/api/v1/'];

/** The dashboard permission each merchant scope is capped by. */
export const SCOPE_CEILING: Record<TApiKeyScope, TStorePermission> = {
  'order:read': 'viewOrders',
  'order:update': 'editOrders',
  'webhook:read': 'manageSettings',
  'webhook:write': 'manageSettings',
  'webhook:delete': 'manageSettings',
};

/** Per key; the budget is configuration (MERCHANT_RATE_LIMIT_PER_MINUTE, default 300). */
function merchantRateLimit(ctx: Context) {
  return { name: 'merchant', max: ctx.deps.config.merchantRateLimitPerMinute, windowMs: 60_000 };
}

function isCsrfExempt(path: string): boolean {
  return CSRF_EXEMPT_PREFIXES.some((prefix) => path.startsWith(prefix));
}

async function storeIdFrom(getRawInput: () => Promise<unknown>): Promise<string> {
  const raw = (await getRawInput()) as { storeId?: unknown } | undefined;
  if (typeof raw?.storeId !== 'string' || raw.storeId.length === 0) {
    throw invalidField('storeId', 'Required.');
  }
  return raw.storeId;
}

/** The signed-in seller of a request (CSRF-checked for unsafe ones); also used by plain Fastify routes. */
export async function authenticateSession(ctx: Context, type: 'query' | 'mutation' | 'subscription') {
  // A Bearer request is never a cookie session, whatever cookies it carries.
  if (ctx.req.headers.authorization) throw new AppError('unauthorized', 'Dashboard routes take the session cookie, not a Bearer key.');
  const token = readCookie(ctx.req, SESSION_COOKIE);
  if (!token) throw new AppError('unauthorized', 'Sign in first.');
  const resolved = await resolveSession(ctx.em, ctx.clock, token);
  if (!resolved) throw new AppError('unauthorized', 'The session has expired; sign in again.');
  if (type === 'mutation' && !isCsrfExempt(ctx.req.publicPath)) {
    const header = ctx.req.headers['x-csrf-token'];
    if (typeof header !== 'string' || !safeEqual(header, resolved.session.csrfToken)) {
      throw new AppError('csrf_failed', 'Missing or wrong X-CSRF-Token header.');
    }
  }
  if (resolved.slid) setCookie(ctx.res, SESSION_COOKIE, token, sessionCookieOptions(ctx.deps.config));
  return { ...resolved, token };
}

/** A signed-in seller or staff member. */
export const sessionProcedure = baseProcedure.use(async ({ ctx, type, next }) => {
  const { user, session, token } = await authenticateSession(ctx, type);
  return next({ ctx: { ...ctx, user, session, sessionToken: token } });
});

/** The user's membership of the store, holding `permission` when given; 403 otherwise. */
export async function requireMember(ctx: Pick<Context, 'em'>, userId: string, storeId: string, permission?: TStorePermission) {
  const member = await findMembership(ctx.em, storeId, userId);
  if (!member) throw new AppError('store_forbidden', 'You are not a member of this store.');
  if (permission && !hasPermission(member, permission)) {
    throw new AppError('permission_missing', `This needs the ${permission} permission.`);
  }
  return member;
}

/** A member of the store named by `storeId` in the input, holding `permission` when given. */
export function storeProcedure(permission?: TStorePermission) {
  return sessionProcedure.use(async ({ ctx, getRawInput, next }) => {
    const storeId = await storeIdFrom(getRawInput);
    const member = await requireMember(ctx, ctx.user.id, storeId, permission);
    return next({ ctx: { ...ctx, storeId, member } });
  });
}

/** A merchant API call: Bearer key with `scope`, reaching the store in the path, within the owner's permissions. */
export function merchantProcedure(scope: TApiKeyScope) {
  return baseProcedure.use(async ({ ctx, getRawInput, next }) => {
    const named = ((await getRawInput()) as { storeId?: unknown } | undefined)?.storeId;
    // Authenticate first (a request without a key is 401 whatever else is wrong with it).
    const credential = await authenticateApiKey(ctx, typeof named === 'string' ? named : '');
    const storeId = await storeIdFrom(getRawInput);
    await enforceRateLimit(ctx, merchantRateLimit(ctx), `key:${credential.keyId}`);
    if (!credential.scopes.includes(scope)) throw new AppError('scope_missing', `This key lacks the ${scope} scope.`);
    // A store that does not exist is answered like one the key may not reach.
    if (!credential.storeIds.includes(storeId)) throw new AppError('store_forbidden', 'This key may not reach this store.');
    const member = credential.member;
    if (!member) throw new AppError('store_forbidden', 'The key owner is no longer a member of this store.');
    const ceiling = SCOPE_CEILING[scope];
    if (!hasPermission(member, ceiling)) {
      throw new AppError('permission_missing', `The key owner lacks the ${ceiling} permission in this store.`);
    }
    return next({ ctx: { ...ctx, credential, storeId } });
  });
}

/** A buyer signed in to one store's customer area. */
export const customerProcedure = baseProcedure.use(async ({ ctx, next }) => {
  const customer = await authenticateCustomer(ctx);
  return next({ ctx: { ...ctx, customer } });
});
