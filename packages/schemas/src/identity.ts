/** Seller identity: registration, login, sessions, password reset. */
import { z } from 'zod';
import { ZEmail, ZTimestamp } from './common.js';

export const ZPassword = z.string().min(10, 'at least 10 characters').max(200);

export const ZCredentials = z.strictObject({ email: ZEmail, password: ZPassword });
/** Login takes any password length so a wrong guess never reveals the rules. */
export const ZLoginInput = z.strictObject({ email: ZEmail, password: z.string().min(1).max(200) });
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
