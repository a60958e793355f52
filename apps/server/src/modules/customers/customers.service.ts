/**
 * Buyers' sign-in to one store: a 6-digit code e-mailed to them (stored as an HMAC under a
 * server key, single use, 10 minutes, 5 tries), then a `svc_customer` session that is
 * separate from any seller session.
 */
import { inTransaction } from '../request/transaction.js';
import type { TBuyerOrder, TCustomer, TCustomerList, TListCustomersQuery } from '@svc/schemas';
import type { Config } from '../../config.js';
import { deriveKey, hmacHex, randomDigits, randomToken, safeEqual, sha256Hex } from '../../lib/crypto.js';
import { cursorScope, decodeCursor, keysetPage } from '../../lib/cursor.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { Context, ServiceContext } from '../request/context.js';
import { enforceTighterLimit } from '../request/rate-limit.js';
import { recordMail } from '../mail/outbox.js';
import { buyerEmails, buyerStats, DEFAULT_PAGE_SIZE, getBuyerOrder, listBuyerOrders } from '../orders/order-reads.js';
import { assertStoreOrigin } from './customer-session.js';
import { StoreSchema } from '../stores/stores.entities.js';
import { CUSTOMER_SESSION_TTL_MS } from './customer-cookie.js';
import { countAttempt, lockAddress, selectCustomerEmails } from './customers.repo.js';
import { CustomerCodeSchema, CustomerSchema, CustomerSessionSchema, type Customer } from './customers.entities.js';

const CODE_TTL_MS = 10 * 60_000;
const MAX_CODE_ATTEMPTS = 5;
/** Code e-mails per address and store, on top of the per-client limit on the route. */
export const CODE_REQUESTS_PER_EMAIL = { name: 'customer.code.email', max: 5, windowMs: 15 * 60_000 };

/** A code opens the mode it was sent for: a test sign-in's code never opens the live area. */
function codeHash(config: Config, storeId: string, email: string, code: string, mode?: 'live' | 'test'): string {
  const scope = mode === 'test' ? `${storeId}:${email}:${code}:test` : `${storeId}:${email}:${code}`;
  return hmacHex(deriveKey(config.encryptionKey, 'customer-code'), scope);
}

export function toCustomerView(customer: Customer): TCustomer {
  return {
    id: customer.id,
    storeId: customer.store.id,
    livemode: customer.livemode,
    email: customer.email,
    createdAt: customer.createdAt.toISOString(),
  };
}

async function findOpenStore(ctx: ServiceContext, storeId: string) {
  const store = await ctx.em.findOne(StoreSchema, { id: storeId, banned: false });
  if (!store) throw new AppError('not_found', 'Store not found.');
  return store;
}

/**
 * Sends a code. Answers the same whether or not the address has ever ordered. Beside the route's
 * per-client budget, a per-address one (CODE_REQUESTS_PER_EMAIL); the rate-limit headers describe
 * whichever of the two has less left, so a client counting down X-RateLimit-Remaining is not
 * surprised by a 429.
 */
export async function startCustomerLogin(
  ctx: ServiceContext & Pick<Context, 'answer'>,
  input: { storeId: string; email: string; mode?: 'live' | 'test' | undefined },
): Promise<void> {
  const store = await findOpenStore(ctx, input.storeId);
  await enforceTighterLimit(ctx, CODE_REQUESTS_PER_EMAIL, `${store.id}:${input.email}`);
  const now = ctx.clock.now();
  const code = randomDigits(6);
  await inTransaction(ctx, async (tx) => {
    // A new code replaces any earlier one still open. Requests for the same address take
    // turns, so two in parallel cannot each leave their code open beside the other's.
    await lockAddress(tx.em, store.id, input.email);
    await tx.em.nativeUpdate(
      CustomerCodeSchema,
      { store: store.id, email: input.email, usedAt: null },
      { usedAt: now },
    );
    await tx.em.insert(CustomerCodeSchema, {
      id: newId(),
      store: store.id,
      email: input.email,
      codeHash: codeHash(ctx.deps.config, store.id, input.email, code, input.mode),
      attempts: 0,
      createdAt: now,
      expiresAt: new Date(now.getTime() + CODE_TTL_MS),
      usedAt: null,
    });
    // The code and its mail commit together; the mail sender sends it, never this request.
    await recordMail(tx, {
      to: input.email,
      subject: `Your sign-in code for ${store.name}`,
      text: `Your code is ${code}. It expires in 10 minutes and works once.\n\nIf you did not ask for it, ignore this e-mail.`,
      // A test-mode sign-in's code stays in the development mailbox, as all test mail does.
      livemode: input.mode !== 'test',
    });
  });
}

export async function verifyCustomerLogin(
  ctx: ServiceContext,
  input: { storeId: string; email: string; code: string; mode?: 'live' | 'test' | undefined },
): Promise<{ customer: TCustomer; token: string }> {
  const store = await findOpenStore(ctx, input.storeId);
  const now = ctx.clock.now();
  const wrong = () => new AppError('token_invalid', 'The code is wrong or has expired.');
  const open = await ctx.em.findOne(
    CustomerCodeSchema,
    { store: store.id, email: input.email, usedAt: null, expiresAt: { $gt: now } },
    { orderBy: { createdAt: 'desc' } },
  );
  if (!open) throw wrong();
  // Count the try first, atomically, so parallel guesses cannot exceed the budget.
  const attempts = await countAttempt(ctx.em, open.id);
  if (attempts === undefined || attempts > MAX_CODE_ATTEMPTS) throw wrong();
  if (!safeEqual(open.codeHash, codeHash(ctx.deps.config, store.id, input.email, input.code, input.mode)))
    throw wrong();
  // Single use: only the request that flips used_at wins.
  const used = await ctx.em.nativeUpdate(CustomerCodeSchema, { id: open.id, usedAt: null }, { usedAt: now });
  if (used !== 1) throw wrong();
  // Signing in closes every code of the address, should any older one still be open.
  await ctx.em.nativeUpdate(CustomerCodeSchema, { store: store.id, email: input.email, usedAt: null }, { usedAt: now });

  // A buyer signs in to the store's live orders, or (`mode: 'test'`, the code from the development
  // mailbox) to their test orders and subscriptions.
  const livemode = input.mode !== 'test';
  await ctx.em.upsert(
    CustomerSchema,
    { id: newId(), store: store.id, livemode, email: input.email, createdAt: now, lastLoginAt: now },
    {
      onConflictFields: ['store', 'livemode', 'email'],
      onConflictAction: 'merge',
      onConflictMergeFields: ['lastLoginAt'],
    },
  );
  const customer = await ctx.em.findOneOrFail(CustomerSchema, { store: store.id, livemode, email: input.email });
  const token = randomToken(32);
  await ctx.em.insert(CustomerSessionSchema, {
    idHash: sha256Hex(token),
    customer: customer.id,
    createdAt: now,
    expiresAt: new Date(now.getTime() + CUSTOMER_SESSION_TTL_MS),
  });
  return { customer: toCustomerView(customer), token };
}

/**
 * Ends the buyer's session. Its store's origin rule holds here too (`assertStoreOrigin`): the
 * cookie goes with any store's call (SameSite=None), so a theme on another store's origin must
 * not sign this store's buyer out. No session, or one already gone: nothing to end.
 */
export async function endCustomerSession(
  ctx: ServiceContext & Pick<Context, 'caller'>,
  token: string | undefined,
): Promise<void> {
  if (!token) return;
  const session = await ctx.em.findOne(
    CustomerSessionSchema,
    { idHash: sha256Hex(token) },
    { populate: ['customer.store'] },
  );
  if (!session) return;
  assertStoreOrigin(ctx, session.customer.getEntity().store.getEntity());
  await ctx.em.nativeDelete(CustomerSessionSchema, { idHash: session.idHash });
}

export function listCustomerOrders(
  ctx: ServiceContext,
  customer: Customer,
  input: { limit?: number | undefined; cursor?: string | undefined },
) {
  return listBuyerOrders(
    { ...ctx, livemode: customer.livemode },
    { storeId: customer.store.id, customerEmail: customer.email },
    input.limit ?? 50,
    input.cursor,
  );
}

export function getCustomerOrder(ctx: ServiceContext, customer: Customer, orderId: string): Promise<TBuyerOrder> {
  return getBuyerOrder(
    { ...ctx, livemode: customer.livemode },
    { storeId: customer.store.id, customerEmail: customer.email },
    orderId,
  );
}

/**
 * The seller's list of the store's customers: every address that bought in the store (an order
 * paid, refunded since or not) and every buyer who signed in to its customer area, one row per
 * address, in address order, keyset-paged by the address; `search` keeps those whose address
 * starts with it (addresses are stored lower-cased, so it is lower-cased too). Each row has the
 * buyer's paid, unrefunded orders and their sum, their last order, and their account if they have
 * one, read for the page's addresses only: a page costs the same on a store of any size.
 */
export async function listStoreCustomers(ctx: ServiceContext, input: TListCustomersQuery): Promise<TCustomerList> {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const emailPrefix = input.search?.toLowerCase();
  const key = ctx.deps.config.encryptionKey;
  const scope = cursorScope('customers', { storeId: input.storeId, livemode: ctx.livemode, search: emailPrefix });
  const after = input.cursor ? decodeCursor(key, scope, input.cursor).id : undefined;
  const filter = { storeId: input.storeId, emailPrefix };
  // Both halves in byte order: the first limit + 1 of their union are the page and whether more follow.
  const [buyers, accounts] = await Promise.all([
    buyerEmails(ctx, filter, after, limit + 1),
    selectCustomerEmails(ctx.em, { ...filter, livemode: ctx.livemode }, after, limit + 1),
  ]);
  const emails = [...new Set([...buyers, ...accounts])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const { page, hasMore, nextCursor } = keysetPage(
    key,
    scope,
    emails.slice(0, limit + 1).map((email) => ({ id: email })),
    limit,
    () => 0,
  );
  const pageEmails = page.map((row) => row.id);
  const [stats, accountRows] = await Promise.all([
    buyerStats(ctx, input.storeId, pageEmails),
    pageEmails.length === 0
      ? []
      : ctx.em.find(CustomerSchema, { store: input.storeId, livemode: ctx.livemode, email: { $in: pageEmails } }),
  ]);
  const accountOf = new Map(accountRows.map((customer) => [customer.email, customer]));
  return {
    customers: pageEmails.map((email) => {
      const bought = stats.get(email);
      const account = accountOf.get(email);
      const seen = [account?.createdAt, bought?.firstOrderAt].filter((at): at is Date => at !== undefined);
      return {
        id: account?.id ?? null,
        livemode: ctx.livemode,
        email,
        createdAt: new Date(Math.min(...seen.map((at) => at.getTime()))).toISOString(),
        orders: bought?.orders ?? 0,
        spent: bought?.spent ?? 0,
        lastOrderAt: bought?.lastOrderAt.toISOString() ?? null,
      };
    }),
    limit,
    hasMore,
    nextCursor,
  };
}
