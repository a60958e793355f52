/**
 * The signed-in seller's own account: the display name, the password changed with the current one (the other
 * sessions end, this one stays), the sessions listed and signed out, and the e-mail address
 * changed through a link mailed to the new address (the old one is told when it is asked for and
 * when it is done).
 */
import type { TAccountSession, TUser } from '@svc/schemas';
import { hashPassword, randomToken, sha256Hex, verifyPassword } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import type { RateLimitRule } from '../../lib/rate-limit.js';
import type { Context, ServiceContext } from '../request/context.js';
import { enforceTighterLimit } from '../request/rate-limit.js';
import { inTransaction } from '../request/transaction.js';
import { recordMail } from '../mail/outbox.js';
import { EmailChangeSchema, SignInCodeSchema, UserSchema } from './identity.entities.js';
import { confirmEmailMail, emailChangeNotice } from './identity-mail.js';
import { deleteOtherSessionsOf, listSessionsOf } from './sessions.js';
import { toUserView } from './user-view.js';

/** Current passwords tried on one account from its own sessions: no password oracle behind an open session. */
export const PASSWORD_CHECKS_PER_ACCOUNT: RateLimitRule = {
  name: 'auth.password.account',
  max: 5,
  windowMs: 15 * 60_000,
};

const EMAIL_CHANGE_TTL_MS = 60 * 60_000;

/** Checks the current password within the account's budget; a wrong one is a 400 at `field`. */
async function checkPassword(
  ctx: ServiceContext & Pick<Context, 'answer'>,
  user: { id: string; passwordHash?: string | null | undefined },
  password: string,
  field: string,
): Promise<void> {
  await enforceTighterLimit(ctx, PASSWORD_CHECKS_PER_ACCOUNT, `user:${user.id}`);
  if (!user.passwordHash || !(await verifyPassword(password, user.passwordHash)))
    // 400, not 401: the session is fine, and a 401 would send the dashboard to sign-in.
    throw new AppError('validation_failed', 'Your current password is not right.', {
      issues: [{ path: field, message: 'Your current password is not right.' }],
    });
}

/**
 * Mails a confirmation link to the new address and a notice to the old one. An address another
 * account holds is refused only when the link is opened, so asking does not tell whether it has
 * an account.
 */
export async function requestEmailChange(
  ctx: ServiceContext & Pick<Context, 'answer'>,
  userId: string,
  input: { newEmail: string; password: string },
): Promise<void> {
  const user = await ctx.em.findOne(UserSchema, { id: userId });
  if (!user) throw new AppError('unauthorized', 'Sign in again.');
  await checkPassword(ctx, user, input.password, 'password');
  if (input.newEmail === user.email)
    throw new AppError('validation_failed', 'That is already your e-mail address.', {
      issues: [{ path: 'newEmail', message: 'That is already your e-mail address.' }],
    });
  const token = randomToken(32);
  const now = ctx.clock.now();
  const link = `${ctx.deps.config.publicUrl}/dashboard/confirm-email?token=${encodeURIComponent(token)}`;
  await inTransaction(ctx, async (tx) => {
    tx.em.create(EmailChangeSchema, {
      tokenHash: sha256Hex(token),
      user: user.id,
      newEmail: input.newEmail,
      createdAt: now,
      expiresAt: new Date(now.getTime() + EMAIL_CHANGE_TTL_MS),
      usedAt: null,
    });
    await recordMail(tx, { to: input.newEmail, ...confirmEmailMail(link) });
    await recordMail(tx, { to: user.email, ...emailChangeNotice(input.newEmail, false) });
  });
}

/** Opens the link: the account's address becomes the new one, once; the old address is told. */
export async function confirmEmailChange(ctx: ServiceContext, input: { token: string }): Promise<{ email: string }> {
  const now = ctx.clock.now();
  const invalid = () => new AppError('token_invalid', 'This link is invalid or has expired.');
  const change = await ctx.em.findOne(EmailChangeSchema, { tokenHash: sha256Hex(input.token) });
  if (!change || change.usedAt || change.expiresAt.getTime() <= now.getTime()) throw invalid();
  return inTransaction(ctx, async (tx) => {
    const claimed = await tx.em.nativeUpdate(
      EmailChangeSchema,
      { tokenHash: change.tokenHash, usedAt: null },
      { usedAt: now },
    );
    if (claimed !== 1) throw invalid();
    if (await tx.em.count(UserSchema, { email: change.newEmail }))
      throw new AppError('conflict', 'An account with this e-mail already exists.');
    const user = await tx.em.findOneOrFail(UserSchema, { id: change.user.id });
    const oldEmail = user.email;
    await tx.em.nativeUpdate(UserSchema, { id: user.id }, { email: change.newEmail, updatedAt: now });
    await recordMail(tx, { to: oldEmail, ...emailChangeNotice(change.newEmail, true) });
    return { email: change.newEmail };
  });
}

/** The account's display name (shown beside the e-mail in staff lists); null clears it. */
export async function updateAccount(
  ctx: ServiceContext,
  userId: string,
  input: { name: string | null },
): Promise<TUser> {
  const user = await ctx.em.findOne(UserSchema, { id: userId });
  if (!user) throw new AppError('unauthorized', 'Sign in again.');
  user.name = input.name;
  user.updatedAt = ctx.clock.now();
  await ctx.em.flush();
  return toUserView(user);
}

export async function changePassword(
  ctx: ServiceContext & Pick<Context, 'answer'>,
  who: { userId: string; sessionToken: string },
  input: { currentPassword: string; newPassword: string },
): Promise<void> {
  const user = await ctx.em.findOne(UserSchema, { id: who.userId });
  if (!user) throw new AppError('unauthorized', 'Sign in again.');
  await checkPassword(ctx, user, input.currentPassword, 'currentPassword');
  const now = ctx.clock.now();
  const passwordHash = await hashPassword(input.newPassword);
  await inTransaction(ctx, async (tx) => {
    await tx.em.nativeUpdate(UserSchema, { id: user.id }, { passwordHash, updatedAt: now });
    await deleteOtherSessionsOf(tx, user.id, who.sessionToken);
    // Whoever had the old password holds nothing back: its open e-mailed sign-in codes close.
    await tx.em.nativeUpdate(SignInCodeSchema, { user: user.id, usedAt: null }, { usedAt: now });
  });
}

export async function listSessions(
  ctx: ServiceContext,
  who: { userId: string; sessionToken: string },
): Promise<TAccountSession[]> {
  const rows = await listSessionsOf(ctx, who.userId, who.sessionToken);
  return rows.map((row) => ({
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    lastSeenAt: row.lastSeenAt.toISOString(),
    current: row.current,
  }));
}

/** `Sign out everywhere` (else): every session of the account but this one ends. */
export async function signOutOtherSessions(
  ctx: ServiceContext,
  who: { userId: string; sessionToken: string },
): Promise<{ signedOut: number }> {
  return { signedOut: await deleteOtherSessionsOf(ctx, who.userId, who.sessionToken) };
}
