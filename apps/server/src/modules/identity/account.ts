/**
 * The signed-in seller's own account: the password changed with the current one (the other
 * sessions end, this one stays), and the sessions listed and signed out.
 */
import type { TAccountSession } from '@svc/schemas';
import { hashPassword, verifyPassword } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import type { RateLimitRule } from '../../lib/rate-limit.js';
import type { Context, ServiceContext } from '../request/context.js';
import { enforceTighterLimit } from '../request/rate-limit.js';
import { inTransaction } from '../request/transaction.js';
import { SignInCodeSchema, UserSchema } from './identity.entities.js';
import { deleteOtherSessionsOf, listSessionsOf } from './sessions.js';

/** Current passwords tried on one account from its own sessions: no password oracle behind an open session. */
export const PASSWORD_CHECKS_PER_ACCOUNT: RateLimitRule = {
  name: 'auth.password.account',
  max: 5,
  windowMs: 15 * 60_000,
};

export async function changePassword(
  ctx: ServiceContext & Pick<Context, 'answer'>,
  who: { userId: string; sessionToken: string },
  input: { currentPassword: string; newPassword: string },
): Promise<void> {
  const user = await ctx.em.findOne(UserSchema, { id: who.userId });
  if (!user?.passwordHash) throw new AppError('unauthorized', 'Sign in again.');
  await enforceTighterLimit(ctx, PASSWORD_CHECKS_PER_ACCOUNT, `user:${user.id}`);
  if (!(await verifyPassword(input.currentPassword, user.passwordHash)))
    // 400, not 401: the session is fine, and a 401 would send the dashboard to sign-in.
    throw new AppError('validation_failed', 'Your current password is not right.', {
      issues: [{ path: 'currentPassword', message: 'Your current password is not right.' }],
    });
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
