/**
 * Two-factor sign-in for sellers: TOTP (RFC 6238: SHA-1, 6 digits, 30 s, one step of drift either
 * way, what every authenticator app reads) and ten single-use recovery codes.
 *
 * Enrolment is two steps: `startTwoFactor` makes a secret, keeps it sealed on the account as
 * pending and hands it out as text, as an `otpauth://` URI and as a QR code (an SVG data URL, an
 * image, so no script or style of its own reaches the page); `confirmTwoFactor` turns it on with a
 * first code from the app and answers the recovery codes, once (the account keeps their HMACs).
 * A code is accepted once: the account remembers the last step it took, and a code of that step
 * or an older one fails (a code seen over a shoulder or in a log cannot be played again).
 */
import { randomInt } from 'node:crypto';
import type { TAccount, TTwoFactorSetup } from '@svc/schemas';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import { deriveKey, dummyPasswordHash, hmacHex, safeEqual, seal, unseal, verifyPassword } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { RateLimitRule } from '../../lib/rate-limit.js';
import type { Context, ServiceContext } from '../request/context.js';
import { enforceTighterLimit } from '../request/rate-limit.js';
import { inTransaction } from '../request/transaction.js';
import { RecoveryCodeSchema, UserSchema, type User } from './identity.entities.js';
import { toUserView } from './user-view.js';

const ISSUER = 'svc';
const PERIOD_S = 30;
const RECOVERY_CODES = 10;
/** Lower-case letters and digits without the look-alikes (0/o, 1/l/i): 31 signs, 49 bits a code. */
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/**
 * Second-factor tries on one account (sign-in, confirm, disable by code), from whatever address:
 * six digits, three of them right at a time, leave a guesser with 5 tries a quarter hour about one
 * chance in 70,000 a day.
 */
export const TWO_FACTOR_TRIES_PER_ACCOUNT: RateLimitRule = {
  name: 'auth.two_factor.account',
  max: 5,
  windowMs: 15 * 60_000,
};

/** Passwords tried to turn it off, per account: a session left open must not become a password oracle. */
export const DISABLE_PASSWORD_TRIES_PER_ACCOUNT: RateLimitRule = {
  name: 'auth.two_factor.disable.account',
  max: 5,
  windowMs: 15 * 60_000,
};

const secretKey = (ctx: ServiceContext) => deriveKey(ctx.deps.config.encryptionKey, 'totp-secret');
const recoveryHash = (ctx: ServiceContext, userId: string, code: string) =>
  hmacHex(deriveKey(ctx.deps.config.encryptionKey, 'recovery-code'), `${userId}:${code}`);

/** A recovery code as typed: case and the dash are free. */
const normalRecovery = (code: string) => code.replace(/-/g, '').toLowerCase();

function totpOf(user: User, secret: string): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label: user.email,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_S,
    secret: Secret.fromBase32(secret),
  });
}

async function loadUser(ctx: ServiceContext, userId: string): Promise<User> {
  const user = await ctx.em.findOne(UserSchema, { id: userId });
  if (!user) throw new AppError('unauthorized', 'Sign in again.');
  return user;
}

export async function readAccount(ctx: ServiceContext, userId: string): Promise<TAccount> {
  const user = await loadUser(ctx, userId);
  const enabled = user.totpEnabledAt !== null && user.totpEnabledAt !== undefined;
  const recoveryCodesLeft = enabled ? await ctx.em.count(RecoveryCodeSchema, { user: userId, usedAt: null }) : 0;
  return { user: toUserView(user), twoFactor: { enabled, recoveryCodesLeft } };
}

/** Begins an enrolment (or begins it again, with a new secret, while it is not confirmed). */
export async function startTwoFactor(ctx: ServiceContext, userId: string): Promise<TTwoFactorSetup> {
  const user = await loadUser(ctx, userId);
  if (user.totpEnabledAt) throw new AppError('conflict', 'Two-factor sign-in is already on. Turn it off first.');
  const secret = new Secret({ size: 20 }).base32;
  user.totpSecretEnc = seal(secretKey(ctx), secret);
  user.totpLastStep = null;
  user.updatedAt = ctx.clock.now();
  await ctx.em.flush();
  const otpauthUri = totpOf(user, secret).toString();
  const svg = await QRCode.toString(otpauthUri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return { secret, otpauthUri, qrCode: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` };
}

/**
 * Whether `code` is the app's code now (one step either way), taken once: the step is claimed by
 * one conditional update, so two requests with the same code cannot both pass.
 */
async function useTotp(ctx: ServiceContext, user: User, code: string): Promise<boolean> {
  if (!user.totpSecretEnc || !/^\d{6}$/.test(code)) return false;
  const secret = unseal(secretKey(ctx), user.totpSecretEnc);
  const now = ctx.clock.now().getTime();
  const delta = totpOf(user, secret).validate({ token: code, timestamp: now, window: 1 });
  if (delta === null) return false;
  const step = Math.floor(now / 1000 / PERIOD_S) + delta;
  const claimed = await ctx.em.nativeUpdate(
    UserSchema,
    { id: user.id, $or: [{ totpLastStep: null }, { totpLastStep: { $lt: step } }] },
    { totpLastStep: step },
  );
  if (claimed === 1) user.totpLastStep = step;
  return claimed === 1;
}

/** Whether `code` is one of the account's unused recovery codes, and uses it (once, whoever races). */
async function useRecoveryCode(ctx: ServiceContext, user: User, code: string): Promise<boolean> {
  const hash = recoveryHash(ctx, user.id, normalRecovery(code));
  const open = await ctx.em.find(RecoveryCodeSchema, { user: user.id, usedAt: null });
  const match = open.find((row) => safeEqual(row.codeHash, hash));
  if (!match) return false;
  const used = await ctx.em.nativeUpdate(
    RecoveryCodeSchema,
    { id: match.id, usedAt: null },
    { usedAt: ctx.clock.now() },
  );
  return used === 1;
}

/** The app's code or a recovery code, within the account's budget of second-factor tries. */
async function useSecondFactor(
  ctx: ServiceContext & Pick<Context, 'answer'>,
  user: User,
  code: string,
): Promise<boolean> {
  await enforceTighterLimit(ctx, TWO_FACTOR_TRIES_PER_ACCOUNT, `user:${user.id}`);
  return /^\d{6}$/.test(code.trim()) ? useTotp(ctx, user, code.trim()) : useRecoveryCode(ctx, user, code.trim());
}

/**
 * The second step of a sign-in whose password (and e-mailed code, when one was asked) was right:
 * nothing for an account without two-factor sign-in; `two_factor_required` when no code came;
 * `unauthorized` for a wrong or used one.
 */
export async function requireSecondFactor(
  ctx: ServiceContext & Pick<Context, 'answer'>,
  user: User,
  code: string | undefined,
): Promise<void> {
  if (!user.totpEnabledAt) return;
  if (code === undefined)
    throw new AppError(
      'two_factor_required',
      'Two-factor sign-in is on for this account: enter the code from your authenticator app, or a recovery code.',
    );
  if (!(await useSecondFactor(ctx, user, code)))
    throw new AppError('unauthorized', 'That code is wrong or was already used.');
}

/** Turns two-factor sign-in on with a first code of the pending secret; answers the recovery codes, once. */
export async function confirmTwoFactor(
  ctx: ServiceContext & Pick<Context, 'answer'>,
  userId: string,
  input: { code: string },
): Promise<string[]> {
  const user = await loadUser(ctx, userId);
  if (user.totpEnabledAt) throw new AppError('conflict', 'Two-factor sign-in is already on.');
  if (!user.totpSecretEnc) throw new AppError('conflict', 'Start setting up two-factor sign-in first.');
  await enforceTighterLimit(ctx, TWO_FACTOR_TRIES_PER_ACCOUNT, `user:${user.id}`);
  if (!(await useTotp(ctx, user, input.code)))
    throw new AppError('validation_failed', 'That code is wrong: enter the 6 digits the app shows now.', {
      issues: [{ path: 'code', message: 'That code is wrong: enter the 6 digits the app shows now.' }],
    });
  const now = ctx.clock.now();
  return inTransaction(ctx, async (tx) => {
    const codes = await replaceRecoveryCodes(tx, user.id);
    const row = await tx.em.findOneOrFail(UserSchema, { id: user.id });
    row.totpEnabledAt = now;
    row.updatedAt = now;
    return codes;
  });
}

/** Ten new recovery codes for the account, in place of all its old ones (used or not); answers them, once. */
async function replaceRecoveryCodes(ctx: ServiceContext, userId: string): Promise<string[]> {
  const now = ctx.clock.now();
  const codes = Array.from({ length: RECOVERY_CODES }, () => {
    const raw = Array.from({ length: 10 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join('');
    return `${raw.slice(0, 5)}-${raw.slice(5)}`;
  });
  await ctx.em.nativeDelete(RecoveryCodeSchema, { user: userId });
  for (const code of codes)
    ctx.em.create(RecoveryCodeSchema, {
      id: newId(),
      user: userId,
      codeHash: recoveryHash(ctx, userId, normalRecovery(code)),
      createdAt: now,
      usedAt: null,
    });
  await ctx.em.flush();
  return codes;
}

/**
 * Proof that the account's owner is at the keyboard, not only its open session: the password, or
 * a current code (TOTP or recovery, which is then used). A wrong one is a 400 at its field
 * (`consequence` says what did not happen), not a 401: the session is fine, and a 401 would send
 * the dashboard to sign-in.
 */
async function requireOwnerProof(
  ctx: ServiceContext & Pick<Context, 'answer'>,
  user: User,
  input: { password?: string | undefined; code?: string | undefined },
  consequence: string,
): Promise<void> {
  let ok = false;
  if (input.password !== undefined) {
    await enforceTighterLimit(ctx, DISABLE_PASSWORD_TRIES_PER_ACCOUNT, `user:${user.id}`);
    ok = await verifyPassword(input.password, user.passwordHash ?? (await dummyPasswordHash()));
  } else if (input.code !== undefined) ok = await useSecondFactor(ctx, user, input.code);
  if (ok) return;
  const field = input.password !== undefined ? 'password' : 'code';
  const message = field === 'password' ? 'That password is not right.' : 'That code is wrong or was already used.';
  throw new AppError('validation_failed', `${message} ${consequence}`, { issues: [{ path: field, message }] });
}

/**
 * Ten new recovery codes, with the password or a current code (as turning it off takes): the old
 * ones stop working in the same transaction. Answers the new ones, once.
 */
export async function regenerateRecoveryCodes(
  ctx: ServiceContext & Pick<Context, 'answer'>,
  userId: string,
  input: { password?: string | undefined; code?: string | undefined },
): Promise<string[]> {
  const user = await loadUser(ctx, userId);
  if (!user.totpEnabledAt) throw new AppError('conflict', 'Two-factor sign-in is off: there are no recovery codes.');
  await requireOwnerProof(ctx, user, input, 'The recovery codes stay as they were.');
  return inTransaction(ctx, (tx) => replaceRecoveryCodes(tx, user.id));
}

/** Turns two-factor sign-in off, with the password or a current code; the recovery codes go with it. */
export async function disableTwoFactor(
  ctx: ServiceContext & Pick<Context, 'answer'>,
  userId: string,
  input: { password?: string | undefined; code?: string | undefined },
): Promise<void> {
  const user = await loadUser(ctx, userId);
  if (!user.totpEnabledAt) {
    // A pending enrolment is simply dropped.
    user.totpSecretEnc = null;
    await ctx.em.flush();
    return;
  }
  await requireOwnerProof(ctx, user, input, 'Two-factor sign-in stays on.');
  const now = ctx.clock.now();
  await inTransaction(ctx, async (tx) => {
    await tx.em.nativeDelete(RecoveryCodeSchema, { user: user.id });
    await tx.em.nativeUpdate(
      UserSchema,
      { id: user.id },
      { totpSecretEnc: null, totpEnabledAt: null, totpLastStep: null, updatedAt: now },
    );
  });
}
