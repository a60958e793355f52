/**
 * Seller accounts: register, login, logout, password reset. Login costs the same scrypt
 * work whether or not the e-mail exists, and says the same thing when it fails. Past the
 * account's sign-in attempts, the right password needs a code e-mailed to the account too; a
 * reset mails its link after the answer; neither answer tells by its time whether the account
 * exists or the password was right.
 */
import { inTransaction } from '../request/transaction.js';
import type { TUser } from '@svc/schemas';
import { afterAnswer } from '../../lib/after-answer.js';
import {
  deriveKey,
  dummyPasswordHash,
  hashPassword,
  hmacHex,
  randomDigits,
  randomToken,
  safeEqual,
  sha256Hex,
  verifyPassword,
} from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { RateLimitRule } from '../../lib/rate-limit.js';
import { recordMail } from '../mail/outbox.js';
import type { Context, ServiceContext } from '../request/context.js';
import { promisedRemaining, setRateLimitHeaders } from '../request/rate-limit.js';
import { PasswordResetSchema, SignInCodeSchema, UserSchema, type User } from './identity.entities.js';
import { resetLinkMail, signInCodeMail } from './identity-mail.js';
import { tryOpenSignInCodes } from './identity.repo.js';
import { requireSecondFactor } from './two-factor.js';
import { toUserView } from './user-view.js';
import { createSession, deleteSession, deleteSessionsOf, type IssuedSession } from './sessions.js';

const RESET_TTL_MS = 60 * 60_000;
const CODE_TTL_MS = 15 * 60_000;
const MAX_CODE_ATTEMPTS = 5;

/**
 * Sign-in attempts on one account, from whatever addresses they come (the route's own budget is
 * per address): guesses spread over many addresses stop here. Past it, a sign-in needs the right
 * password and a one-time code mailed to the account when the right password came
 * (`sign_in_code_required`): every attempt without a code gets that answer, so a guesser learns
 * nothing of the password, and the owner, who reads the account's mail, still gets in. A
 * successful sign-in clears the account's window, so a seller who signs in often never meets it;
 * so does a password reset. Keyed by the address's hash: no e-mail in Redis.
 */
export const LOGIN_ATTEMPTS_PER_ACCOUNT: RateLimitRule = { name: 'auth.login.account', max: 10, windowMs: 15 * 60_000 };
/** Sign-in codes mailed to one account: only the right password asks for one. */
export const SIGN_IN_CODES_PER_ACCOUNT: RateLimitRule = { name: 'auth.login.code', max: 5, windowMs: 15 * 60_000 };
/**
 * Reset mails to one account, beside the route's 3 an hour per address: a request over it still
 * answers 204 and mails nothing, so it reveals neither the account nor the budget.
 */
export const RESET_MAILS_PER_ACCOUNT: RateLimitRule = { name: 'auth.forgot.account', max: 3, windowMs: 60 * 60_000 };
const accountKey = (email: string) => `account:${sha256Hex(email)}`;

const codeHash = (ctx: ServiceContext, userId: string, code: string) =>
  hmacHex(deriveKey(ctx.deps.config.encryptionKey, 'sign-in-code'), `${userId}:${code}`);

/** The context of work done after the answer: its own EntityManager, nothing of the request's. */
const workContext = (ctx: ServiceContext): ServiceContext => ({
  deps: ctx.deps,
  clock: ctx.clock,
  livemode: ctx.livemode,
  log: ctx.log,
  em: ctx.deps.orm.em.fork(),
});

export { toUserView };

export interface SignedIn {
  user: TUser;
  session: IssuedSession;
}

/** Creates an account (also used by `svc create-user`). */
export async function createUser(ctx: ServiceContext, input: { email: string; password: string }): Promise<User> {
  const existing = await ctx.em.findOne(UserSchema, { email: input.email });
  if (existing) throw new AppError('conflict', 'An account with this e-mail already exists.');
  const now = ctx.clock.now();
  const user = ctx.em.create(UserSchema, {
    id: newId(),
    email: input.email,
    passwordHash: await hashPassword(input.password),
    createdAt: now,
    updatedAt: now,
  });
  await ctx.em.flush();
  return user;
}

export async function register(ctx: ServiceContext, input: { email: string; password: string }): Promise<SignedIn> {
  const user = await createUser(ctx, input);
  return { user: toUserView(user), session: await createSession(ctx, user) };
}

export async function login(
  ctx: ServiceContext & Pick<Context, 'answer'>,
  input: { email: string; password: string; code?: string | undefined; twoFactorCode?: string | undefined },
): Promise<SignedIn> {
  const key = accountKey(input.email);
  const budget = await ctx.deps.limiter.hit(key, LOGIN_ATTEMPTS_PER_ACCOUNT, ctx.clock.now().getTime());
  // The headers describe the tighter of the route's budget and the account's (Retry-After: when the
  // password alone works again).
  if (!budget.allowed || budget.remaining < promisedRemaining(ctx.answer))
    setRateLimitHeaders(ctx.answer, LOGIN_ATTEMPTS_PER_ACCOUNT, budget);
  const user = await ctx.em.findOne(UserSchema, { email: input.email });
  const ok = await verifyPassword(input.password, user?.passwordHash ?? (await dummyPasswordHash()));
  const owner = user?.passwordHash && ok ? user : undefined;
  if (budget.allowed) {
    if (!owner) throw new AppError('unauthorized', 'Wrong e-mail or password.');
  } else if (input.code === undefined) {
    // The code is written and mailed after the answer: its time is the same whatever the password.
    if (owner) afterAnswer(ctx.deps.log, 'sign-in code mail', () => mailSignInCode(workContext(ctx), owner));
    throw new AppError(
      'sign_in_code_required',
      'Too many sign-in attempts on this account. If the password is right, a sign-in code is on its way to the account’s e-mail address: enter it with the password.',
    );
  } else {
    // The e-mailed code is checked here and used only once the second factor (if any) has passed,
    // so a seller asked for both can send the same e-mailed code again with the app's code.
    const match = await matchSignInCode(ctx, user, owner !== undefined, input.code);
    if (!owner || !match) throw new AppError('unauthorized', 'Wrong e-mail, password or code.');
    await requireSecondFactor(ctx, owner, input.twoFactorCode);
    if (!(await claimSignInCode(ctx, owner, match)))
      throw new AppError('unauthorized', 'Wrong e-mail, password or code.');
    await ctx.deps.limiter.clear(key, LOGIN_ATTEMPTS_PER_ACCOUNT);
    return { user: toUserView(owner), session: await createSession(ctx, owner) };
  }
  // The right password: an account with two-factor sign-in wants its second factor too.
  await requireSecondFactor(ctx, owner, input.twoFactorCode);
  await ctx.deps.limiter.clear(key, LOGIN_ATTEMPTS_PER_ACCOUNT);
  return { user: toUserView(owner), session: await createSession(ctx, owner) };
}

/**
 * Mails a sign-in code to the account, within its budget of codes (a request over it mails
 * nothing; the codes already sent still work). The code and its mail commit together.
 */
async function mailSignInCode(ctx: ServiceContext, user: User): Promise<void> {
  const now = ctx.clock.now();
  const budget = await ctx.deps.limiter.hit(accountKey(user.email), SIGN_IN_CODES_PER_ACCOUNT, now.getTime());
  if (!budget.allowed) return;
  const code = randomDigits(6);
  await inTransaction(ctx, async (tx) => {
    // What is used or expired is of no more use: the account keeps only its open codes.
    await tx.em.nativeDelete(SignInCodeSchema, {
      user: user.id,
      $or: [{ usedAt: { $ne: null } }, { expiresAt: { $lte: now } }],
    });
    await tx.em.insert(SignInCodeSchema, {
      id: newId(),
      user: user.id,
      codeHash: codeHash(ctx, user.id, code),
      attempts: 0,
      createdAt: now,
      expiresAt: new Date(now.getTime() + CODE_TTL_MS),
      usedAt: null,
    });
    await recordMail(tx, {
      to: user.email,
      ...signInCodeMail(code, `${ctx.deps.config.publicUrl}/dashboard/forgot-password`),
    });
  });
}

/**
 * The open code `code` matches among the account's (each allows MAX_CODE_ATTEMPTS tries), not yet
 * used. A try counts only behind the right password (`counts`), so a guesser without it cannot
 * wear out the owner's code; the statement that counts runs either way, and for any address
 * (identity.repo.ts).
 */
async function matchSignInCode(
  ctx: ServiceContext,
  user: User | null,
  counts: boolean,
  code: string,
): Promise<string | undefined> {
  // An address with no account runs the statement too (it matches no row), as one without codes does.
  const open = await tryOpenSignInCodes(ctx.em, user?.id ?? '', ctx.clock.now(), counts);
  if (!counts || !user) return undefined;
  const hash = codeHash(ctx, user.id, code);
  return open.find((row) => row.attempts <= MAX_CODE_ATTEMPTS && safeEqual(row.code_hash, hash))?.id;
}

/** Uses the matched code. Single use: only the request that marks it used wins; signing in closes the account's other codes. */
async function claimSignInCode(ctx: ServiceContext, user: User, codeId: string): Promise<boolean> {
  const used = await ctx.em.nativeUpdate(SignInCodeSchema, { id: codeId, usedAt: null }, { usedAt: ctx.clock.now() });
  if (used !== 1) return false;
  await ctx.em.nativeUpdate(SignInCodeSchema, { user: user.id, usedAt: null }, { usedAt: ctx.clock.now() });
  return true;
}

export async function logout(ctx: ServiceContext, sessionToken: string): Promise<void> {
  await deleteSession(ctx, sessionToken);
}

/**
 * Always succeeds from the caller's view; mails a reset link only when the account exists. The
 * answer does the same for every address: one hit of the address's budget of reset mails
 * (RESET_MAILS_PER_ACCOUNT), nothing else. The lookup, the link and its mail (one transaction;
 * the mail sender sends it later) come after the answer, so its time does not tell that the
 * account exists.
 */
export async function requestPasswordReset(ctx: ServiceContext, input: { email: string }): Promise<void> {
  const budget = await ctx.deps.limiter.hit(
    accountKey(input.email),
    RESET_MAILS_PER_ACCOUNT,
    ctx.clock.now().getTime(),
  );
  if (!budget.allowed) return;
  afterAnswer(ctx.deps.log, 'password reset mail', () => mailResetLink(workContext(ctx), input.email));
}

async function mailResetLink(ctx: ServiceContext, email: string): Promise<void> {
  const user = await ctx.em.findOne(UserSchema, { email });
  if (!user) return;
  const token = randomToken(32);
  const now = ctx.clock.now();
  const link = `${ctx.deps.config.publicUrl}/dashboard/reset-password?token=${encodeURIComponent(token)}`;
  await inTransaction(ctx, async (tx) => {
    tx.em.create(PasswordResetSchema, {
      tokenHash: sha256Hex(token),
      user,
      createdAt: now,
      expiresAt: new Date(now.getTime() + RESET_TTL_MS),
      usedAt: null,
    });
    await recordMail(tx, { to: user.email, ...resetLinkMail(link) });
  });
}

/**
 * Sets the new password, burns the link, and signs every existing session out. The account's
 * sign-in window empties and its open sign-in codes close: whoever guessed before the reset
 * holds nothing back.
 */
export async function resetPassword(ctx: ServiceContext, input: { token: string; password: string }): Promise<void> {
  const now = ctx.clock.now();
  const reset = await ctx.em.findOne(
    PasswordResetSchema,
    { tokenHash: sha256Hex(input.token) },
    { populate: ['user'] },
  );
  if (!reset || reset.usedAt || reset.expiresAt.getTime() <= now.getTime()) {
    throw new AppError('token_invalid', 'This reset link is invalid or has expired.');
  }
  const claimed = await ctx.em.nativeUpdate(
    PasswordResetSchema,
    { tokenHash: reset.tokenHash, usedAt: null },
    { usedAt: now },
  );
  if (claimed !== 1) throw new AppError('token_invalid', 'This reset link is invalid or has expired.');
  const user = reset.user.getEntity();
  user.passwordHash = await hashPassword(input.password);
  user.updatedAt = now;
  await ctx.em.flush();
  await deleteSessionsOf(ctx, user.id);
  await ctx.em.nativeUpdate(SignInCodeSchema, { user: user.id, usedAt: null }, { usedAt: now });
  await ctx.deps.limiter.clear(accountKey(user.email), LOGIN_ATTEMPTS_PER_ACCOUNT);
}
