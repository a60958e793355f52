/**
 * Seller accounts: register, login, logout, password reset. Login costs the same scrypt
 * work whether or not the e-mail exists, and says the same thing when it fails.
 */
import type { TUser } from '@svc/schemas';
import { AppError } from '../../lib/errors.js';
import { dummyPasswordHash, hashPassword, randomToken, sha256Hex, verifyPassword } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import type { RateLimitRule } from '../../lib/rate-limit.js';
import { recordMail } from '../mail/outbox.js';
import type { Context, ServiceContext } from '../request/context.js';
import { enforceTighterLimit } from '../request/rate-limit.js';
import { PasswordResetSchema, UserSchema, type User } from './identity.entities.js';
import { createSession, deleteSession, deleteSessionsOf, type IssuedSession } from './sessions.js';

const RESET_TTL_MS = 60 * 60_000;

/**
 * Sign-in attempts on one account, from whatever addresses they come (the route's own budget is
 * per address): guesses spread over many addresses still stop here, and then even the right
 * password waits for the window. A successful sign-in clears the account's window, so a seller
 * who signs in often never meets it. Keyed by the address's hash: no e-mail in Redis.
 */
export const LOGIN_ATTEMPTS_PER_ACCOUNT: RateLimitRule = { name: 'auth.login.account', max: 10, windowMs: 15 * 60_000 };
const accountKey = (email: string) => `account:${sha256Hex(email)}`;

export function toUserView(user: User): TUser {
  return { id: user.id, email: user.email, createdAt: user.createdAt.toISOString() };
}

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
  return { user: toUserView(user), session: await createSession(ctx.em, ctx.clock, user) };
}

export async function login(
  ctx: ServiceContext & Pick<Context, 'answer'>,
  input: { email: string; password: string },
): Promise<SignedIn> {
  await enforceTighterLimit(ctx, LOGIN_ATTEMPTS_PER_ACCOUNT, accountKey(input.email));
  const user = await ctx.em.findOne(UserSchema, { email: input.email });
  const ok = await verifyPassword(input.password, user?.passwordHash ?? (await dummyPasswordHash()));
  if (!user || !user.passwordHash || !ok) throw new AppError('unauthorized', 'Wrong e-mail or password.');
  await ctx.deps.limiter.clear(accountKey(input.email), LOGIN_ATTEMPTS_PER_ACCOUNT);
  return { user: toUserView(user), session: await createSession(ctx.em, ctx.clock, user) };
}

export async function logout(ctx: ServiceContext, sessionToken: string): Promise<void> {
  await deleteSession(ctx.em, sessionToken);
}

/**
 * Always succeeds from the caller's view; mails a reset link only when the account exists. The
 * link and its mail are written in one transaction and the mail is sent later by the mail sender
 * (modules/mail), so the answer neither waits for SMTP nor tells by its time that the account exists.
 */
export async function requestPasswordReset(ctx: ServiceContext, input: { email: string }): Promise<void> {
  const user = await ctx.em.findOne(UserSchema, { email: input.email });
  if (!user) return;
  const token = randomToken(32);
  const now = ctx.clock.now();
  const link = `${ctx.deps.config.publicUrl}/dashboard/reset-password?token=${encodeURIComponent(token)}`;
  await ctx.em.transactional(async (em) => {
    em.create(PasswordResetSchema, {
      tokenHash: sha256Hex(token),
      user,
      createdAt: now,
      expiresAt: new Date(now.getTime() + RESET_TTL_MS),
      usedAt: null,
    });
    await recordMail(em, ctx.deps, {
      to: user.email,
      subject: 'Reset your svc password',
      text: `Someone asked to reset the password of this account.\n\nTo choose a new one, open:\n${link}\n\nThe link works once, for one hour. If it was not you, ignore this e-mail.`,
    });
  });
}

/** Sets the new password, burns the link, and signs every existing session out. */
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
  await deleteSessionsOf(ctx.em, user.id);
}
