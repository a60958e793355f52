/** Seller identity: registration, login, sessions, password reset. */
import { z } from 'zod';
import { ZEmail, ZTimestamp } from './common.js';

export const ZPassword = z.string().min(10, 'The password must be at least 10 characters.').max(200);

export const ZCredentials = z.strictObject({ email: ZEmail, password: ZPassword });
/** The one-time code a sign-in past the account's attempts needs (`sign_in_code_required`), as e-mailed. */
export const ZSignInCode = z
  .string()
  .trim()
  .regex(/^\d{6}$/, 'Enter the 6-digit code from the e-mail.');

/** Login takes any password length so a wrong guess never reveals the rules. */
export const ZLoginInput = z.strictObject({
  email: ZEmail,
  password: z.string().min(1).max(200),
  code: ZSignInCode.optional().meta({
    description: 'Only after a `sign_in_code_required` answer: the 6-digit code e-mailed to the account',
  }),
});
export const ZForgotInput = z.strictObject({ email: ZEmail });
export const ZResetInput = z.strictObject({ token: z.string().min(20).max(200), password: ZPassword });

export const ZUser = z.object({
  id: z.string(),
  email: z.string(),
  createdAt: ZTimestamp,
});
export type TUser = z.infer<typeof ZUser>;

export const ZAuthResult = z.object({ user: ZUser, csrfToken: z.string() });
export type TAuthResult = z.infer<typeof ZAuthResult>;
