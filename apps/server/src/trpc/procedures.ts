/**
 * Procedure builders: each one states who may call (the `auth`, `csrf` and `cors` parts of the
 * route policy, in meta) and applies the matching guard, which reads its parameters from that
 * same meta. Every procedure then adds its route (`openapi`), its error codes and, where it has
 * them, its rate limit, idempotency and success status. Every builder starts from
 * `baseProcedure`: the rate limit, readable input and the Idempotency-Key step, errors normalised.
 */
import type { TApiKeyScope, TStorePermission } from '@svc/schemas';
import { TRPCError } from '@trpc/server';
import { AppError, logUnshown } from '../lib/errors.js';
import { appErrorOf, publicError, toTRPCError } from './errors.js';
import { assertReadable } from '../lib/input-limits.js';
import {
  authenticateSession,
  authorizeMerchant,
  authorizeStoreAccess,
  dashboardLivemode,
  requireMember,
  storeIdOf,
} from '../modules/access/guards.js';
import { authenticateCustomer } from '../modules/customers/customer-session.js';
import type { Context, RouteCall } from '../modules/request/context.js';
import { enforceRateLimit } from '../modules/request/rate-limit.js';
import { inTurn } from './adapter-options.js';
import { applyIdempotency } from './idempotency.middleware.js';
import { t, type SvcMeta } from './init.js';
import type { AuthSurface, RoutePolicy } from './policy.js';

export const router = t.router;

/** An error as the client may see it (ours, as tRPC carries it), the original logged once when nothing of it is shown. */
function normalised(error: unknown, ctx: Context, path: string): TRPCError {
  const ours = appErrorOf(error);
  if (ours) return error instanceof TRPCError && error.cause === ours ? error : toTRPCError(ours);
  const pub = publicError(error);
  // tRPC wraps what a later step threw; the original is what is logged.
  logUnshown(ctx.log, error instanceof TRPCError ? (error.cause ?? error) : error, pub, { path }, 'procedure failed');
  return toTRPCError(new AppError(pub.code, pub.message, { issues: pub.issues, cause: error }));
}

/** Already in the shape normalised() gives: a TRPCError carrying our error (and so logged if it had to be). */
export function isNormalised(error: unknown): boolean {
  return error instanceof TRPCError && error.cause instanceof AppError;
}

/**
 * The steps every call runs before its guard, in this order: the route's rate limit (a replay or
 * a 409 still counts against the client's budget), every string of the input storable text and
 * every number finite (lib/input-limits.ts), the Idempotency-Key step (unreadable input claims no
 * key); and whatever fails, in them or after them, leaves as an AppError. One middleware, not
 * four: tRPC copies the call's options and context at every layer, which was most of its time on
 * a REST call (bench/README.md, License API). The mutations of one /trpc batch take turns, in the
 * batch's order (`inTurn`); queries run together.
 */
const requestSteps = t.middleware(async ({ ctx, meta, path, type, getRawInput, next }) => {
  const steps = async () => {
    let result: Awaited<ReturnType<typeof next>>;
    try {
      if (meta?.rateLimit) await enforceRateLimit(ctx, meta.rateLimit);
      const input = await getRawInput();
      assertReadable(input);
      result = await applyIdempotency(ctx, meta, path, input, next);
    } catch (error) {
      throw normalised(error, ctx, path);
    }
    if (!result.ok && !isNormalised(result.error)) throw normalised(result.error, ctx, path);
    return result;
  };
  return type === 'mutation' ? inTurn(ctx.answer, steps) : steps();
});

/** What the guards need of the route being called: whether the call is unsafe, and its CSRF policy. */
function callOf(meta: SvcMeta | undefined, type: string): RouteCall {
  return { unsafe: type === 'mutation', csrf: meta?.csrf ?? 'required' };
}

export const baseProcedure = t.procedure.use(requestSteps);

type Declared = Pick<RoutePolicy, 'auth' | 'csrf' | 'cors'>;
const declare = (policy: Declared): SvcMeta => policy;

function authOf<K extends AuthSurface['kind']>(meta: SvcMeta | undefined, kind: K): Extract<AuthSurface, { kind: K }> {
  const auth = meta?.auth;
  if (auth?.kind !== kind) throw new Error(`route declares auth ${auth?.kind ?? 'nothing'}, guard expects ${kind}`);
  return auth as Extract<AuthSurface, { kind: K }>;
}

/** Storefronts and buyers, no credential: open to every origin (themes), no cookie read. */
export const publicProcedure = baseProcedure.meta(
  declare({ auth: { kind: 'public', audience: 'storefront' }, csrf: 'none', cors: 'open' }),
);

/** Sellers signing up, in and out of their password: no credential, same origin only. */
export const sellerAuthProcedure = baseProcedure.meta(
  declare({ auth: { kind: 'public', audience: 'seller' }, csrf: 'none', cors: 'none' }),
);

/**
 * A buyer holding an order (token, e-mail, customer session or a staff session, as the service
 * decides): open to every origin without credentials; a staff session's unsafe call needs CSRF.
 */
export const buyerProcedure = baseProcedure
  .meta(declare({ auth: { kind: 'buyer', staffSession: true }, csrf: 'required', cors: 'open' }))
  // The service checks a staff session itself, as the route's call says (buyerOrderAccess).
  .use(({ meta, type, next }) => next({ ctx: { call: callOf(meta, type) } }));

/**
 * A buyer writing about an order (support tickets): its checkout token or a customer session of
 * its store, from the store's own origins with credentials. No seller session is read.
 */
export const ticketBuyerProcedure = baseProcedure.meta(
  declare({ auth: { kind: 'buyer', staffSession: false }, csrf: 'none', cors: 'store-origins' }),
);

/** A signed-in seller or staff member. */
export const sessionProcedure = baseProcedure
  .meta(declare({ auth: { kind: 'session' }, csrf: 'required', cors: 'none' }))
  .use(async ({ ctx, meta, type, next }) => {
    authOf(meta, 'session');
    const { user, session, token } = await authenticateSession(ctx, callOf(meta, type));
    // The dashboard's mode (X-Svc-Mode) is the call's.
    return next({ ctx: { user, session, sessionToken: token, livemode: dashboardLivemode(ctx) } });
  });

/** A member of the store named by `storeId` in the input, holding `permission` when given. */
export function storeProcedure(permission?: TStorePermission, opts: { ownerOnly?: boolean } = {}) {
  return baseProcedure
    .meta(
      declare({
        auth: { kind: 'session', store: { permission, ownerOnly: opts.ownerOnly } },
        csrf: 'required',
        cors: 'none',
      }),
    )
    .use(async ({ ctx, meta, type, getRawInput, next }) => {
      const { store } = authOf(meta, 'session');
      const { user, session, token } = await authenticateSession(ctx, callOf(meta, type));
      const storeId = storeIdOf(await getRawInput());
      const member = await requireMember(ctx, user, storeId, store?.permission, store?.ownerOnly);
      // The dashboard's mode (X-Svc-Mode) is the call's.
      return next({ ctx: { user, session, sessionToken: token, storeId, member, livemode: dashboardLivemode(ctx) } });
    });
}

/** A merchant API call: Bearer key with `scope`, reaching the store in the path, within the owner's permissions. */
export function merchantProcedure(scope: TApiKeyScope) {
  return baseProcedure
    .meta(declare({ auth: { kind: 'apiKey', scope }, csrf: 'none', cors: 'none' }))
    .use(async ({ ctx, meta, getRawInput, next }) => {
      const { scope: declared } = authOf(meta, 'apiKey');
      const { credential, storeId } = await authorizeMerchant(ctx, declared, await getRawInput());
      // The key's mode is the call's: every service reads and writes only its objects.
      return next({ ctx: { credential, storeId, livemode: credential.livemode } });
    });
}

/**
 * A store operation both audiences call, declared once: a merchant key with `scope`, or a
 * member's session holding `permission` (membership alone when absent) with CSRF on unsafe
 * calls. Its meta says the merchant path (`openapi`, under /merchant/v1/stores/{storeId}) and the
 * dashboard path's tags (`dashboard`); the route table gives it both REST routes, each bound to
 * its credential, and /trpc takes either. The call's mode is the credential's.
 */
export function storeResource(access: { scope: TApiKeyScope; permission?: TStorePermission }) {
  const auth: AuthSurface = {
    kind: 'storeAccess',
    scope: access.scope,
    ...(access.permission && { permission: access.permission }),
  };
  return baseProcedure
    .meta(declare({ auth, csrf: 'required', cors: 'none' }))
    .use(async ({ ctx, meta, type, getRawInput, next }) => {
      const { scope, permission } = authOf(meta, 'storeAccess');
      const { storeId, livemode, actor } = await authorizeStoreAccess(
        ctx,
        { scope, permission },
        callOf(meta, type),
        await getRawInput(),
        ctx.boundCredential,
      );
      return next({ ctx: { storeId, livemode, actor } });
    });
}

/** A buyer signed in to one store's customer area: the store's own origins, with credentials. */
export const customerProcedure = baseProcedure
  .meta(declare({ auth: { kind: 'customer' }, csrf: 'none', cors: 'store-origins' }))
  .use(async ({ ctx, meta, next }) => {
    authOf(meta, 'customer');
    const customer = await authenticateCustomer(ctx);
    return next({ ctx: { customer } });
  });
