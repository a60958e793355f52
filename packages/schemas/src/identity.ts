/** Seller identity: registration, login, sessions, password reset. */
import { z } from 'zod';
import { ZCount, ZEmail, ZSingleLine, ZTimestamp } from './common.js';

export const ZPassword = z.string().min(10, 'The password must be at least 10 characters.').max(200);

export const ZCredentials = z.strictObject({ email: ZEmail, password: ZPassword });
/** The one-time code a sign-in past the account's attempts needs (`sign_in_code_required`), as e-mailed. */
export const ZSignInCode = z
  .string()
  .trim()
  .regex(/^\d{6}$/, 'Enter the 6-digit code from the e-mail.');

/**
 * The second factor at sign-in: six digits from the authenticator app (TOTP, RFC 6238), or one of
 * the account's ten recovery codes (`xxxxx-xxxxx`, letters and digits, case and dash free to vary).
 */
export const ZTwoFactorCode = z
  .string()
  .trim()
  .regex(/^(\d{6}|[0-9a-zA-Z]{5}-?[0-9a-zA-Z]{5})$/, 'the 6-digit code from the authenticator app, or a recovery code');
/** The code of the authenticator app alone: what confirms an enrolment. */
export const ZTotpCode = z
  .string()
  .trim()
  .regex(/^\d{6}$/, 'the 6-digit code from the authenticator app');

/** Login takes any password length so a wrong guess never reveals the rules. */
export const ZLoginInput = z.strictObject({
  email: ZEmail,
  password: z.string().min(1).max(200),
  code: ZSignInCode.optional().meta({
    description: 'Only after a `sign_in_code_required` answer: the 6-digit code e-mailed to the account',
  }),
  twoFactorCode: ZTwoFactorCode.optional().meta({
    description:
      'Only after a `two_factor_required` answer: the 6-digit code of the authenticator app, or one of the recovery codes',
  }),
});
export const ZForgotInput = z.strictObject({ email: ZEmail });
export const ZResetInput = z.strictObject({ token: z.string().min(20).max(200), password: ZPassword });

export const ZUser = z.object({
  id: z.string(),
  email: z.string(),
  /** The name the seller gave (Account page), or null. */
  name: z.string().nullable(),
  createdAt: ZTimestamp,
});
export type TUser = z.infer<typeof ZUser>;

export const ZAuthResult = z.object({ user: ZUser, csrfToken: z.string() });
export type TAuthResult = z.infer<typeof ZAuthResult>;

/** The account as its owner reads it (the Account page). */
export const ZAccount = z.object({
  user: ZUser,
  twoFactor: z.object({
    enabled: z.boolean(),
    /** Recovery codes not yet used (0 when two-factor sign-in is off). */
    recoveryCodesLeft: ZCount,
  }),
});
export type TAccount = z.infer<typeof ZAccount>;

/**
 * An enrolment under way: the secret (base32) to type in, the `otpauth://` URI it encodes, and the
 * same URI as a QR code (an SVG data URL, shown as an image).
 */
export const ZTwoFactorSetup = z.object({
  secret: z.string(),
  otpauthUri: z.string(),
  qrCode: z.string(),
});
export type TTwoFactorSetup = z.infer<typeof ZTwoFactorSetup>;

export const ZConfirmTwoFactorInput = z.strictObject({ code: ZTotpCode });
/** Shown once: the server keeps only their hashes. */
export const ZRecoveryCodes = z.object({ recoveryCodes: z.array(z.string()) });
export type TRecoveryCodes = z.infer<typeof ZRecoveryCodes>;

/** Turning two-factor sign-in off takes the password, or a current code (TOTP or recovery). */
export const ZDisableTwoFactorInput = z
  .strictObject({
    password: z.string().min(1).max(200).optional(),
    code: ZTwoFactorCode.optional(),
  })
  .refine((input) => input.password !== undefined || input.code !== undefined, {
    message: 'the password, or a code from the authenticator app',
    path: ['password'],
  });

/** The account's own fields: the display name (1 to 100 characters, trimmed; null clears it). */
export const ZUpdateAccountInput = z.strictObject({ name: ZSingleLine(100).nullable() });

/** New recovery codes take the password, or a current code (TOTP or recovery), as turning it off does. */
export const ZRegenerateRecoveryCodesInput = ZDisableTwoFactorInput;

export const ZChangePasswordInput = z.strictObject({
  /** Any length: a wrong guess never reveals the rules. */
  currentPassword: z.string().min(1).max(200),
  newPassword: ZPassword,
});

/** One of the account's sessions; never its address or its token. */
export const ZAccountSession = z.object({
  id: z.string(),
  createdAt: ZTimestamp,
  /** To the hour. */
  lastSeenAt: ZTimestamp,
  /** The session this request came with. */
  current: z.boolean(),
});
export type TAccountSession = z.infer<typeof ZAccountSession>;
export const ZAccountSessions = z.object({ sessions: z.array(ZAccountSession) });
export const ZSignedOutOthers = z.object({ signedOut: ZCount });

/** A new e-mail address for the account: confirmed by a link mailed to it; the password is asked. */
export const ZChangeEmailInput = z.strictObject({ newEmail: ZEmail, password: z.string().min(1).max(200) });
export const ZConfirmEmailInput = z.strictObject({ token: z.string().min(20).max(200) });
export const ZEmailChanged = z.object({ email: z.string() });
