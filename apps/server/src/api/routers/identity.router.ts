/** Seller sign-up, sign-in and password reset (no credential, same origin only), and the session itself. */
import { ZAuthResult, ZCredentials, ZForgotInput, ZLoginInput, ZResetInput } from '@svc/schemas';
import { z } from 'zod';
import type { Context } from '../../modules/request/context.js';
import { router, sellerAuthProcedure, sessionProcedure } from '../../trpc/procedures.js';
import {
  login,
  logout,
  register,
  requestPasswordReset,
  resetPassword,
  toUserView,
  type SignedIn,
} from '../../modules/identity/identity.service.js';
import { clearSessionCookie, setSessionCookie } from '../../modules/identity/session-cookie.js';

const MINUTE = 60_000;
const tags = ['auth'];

/** Sets the session cookie and answers with the user and the CSRF token. */
function signedIn(ctx: Context, result: SignedIn) {
  setSessionCookie(ctx.answer, ctx.deps.config, result.session.token);
  return { user: result.user, csrfToken: result.session.csrfToken };
}

export const identityRouter = router({
  register: sellerAuthProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/register', tags, summary: 'Create a seller account and sign in' },
      successStatus: 201,
      rateLimit: { name: 'auth.register', max: 3, windowMs: 60 * MINUTE },
      errors: [],
    })
    .input(ZCredentials)
    .output(ZAuthResult)
    .mutation(async ({ ctx, input }) => signedIn(ctx, await register(ctx, input))),

  login: sellerAuthProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/login', tags, summary: 'Sign in; sets the svc_session cookie' },
      rateLimit: { name: 'auth.login', max: 20, windowMs: 15 * MINUTE },
      // Past the account's attempts, the password must come with the code e-mailed to the account.
      errors: ['unauthorized', 'sign_in_code_required'],
    })
    .input(ZLoginInput)
    .output(ZAuthResult)
    .mutation(async ({ ctx, input }) => signedIn(ctx, await login(ctx, input))),

  // The session's CSRF token is needed, as for every unsafe call a session authenticates: a
  // cross-site form must not sign the seller out.
  logout: sessionProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/logout', tags, summary: 'Sign out (needs X-CSRF-Token)' },
      successStatus: 204,
      errors: [],
    })
    .input(z.strictObject({}).optional())
    .output(z.void())
    .mutation(async ({ ctx }) => {
      await logout(ctx, ctx.sessionToken);
      clearSessionCookie(ctx.answer, ctx.deps.config);
    }),

  session: sessionProcedure
    .meta({
      openapi: { method: 'GET', path: '/auth/session', tags, summary: 'The signed-in user and the CSRF token' },
      errors: [],
    })
    .input(z.strictObject({}).optional())
    .output(ZAuthResult)
    .query(({ ctx }) => ({ user: toUserView(ctx.user), csrfToken: ctx.session.csrfToken })),

  forgot: sellerAuthProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/auth/forgot',
        tags,
        summary: 'E-mail a password reset link (answers the same for unknown e-mails)',
      },
      successStatus: 204,
      rateLimit: { name: 'auth.forgot', max: 3, windowMs: 60 * MINUTE },
      errors: [],
    })
    .input(ZForgotInput)
    .output(z.void())
    .mutation(({ ctx, input }) => requestPasswordReset(ctx, input)),

  reset: sellerAuthProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/auth/reset',
        tags,
        summary: 'Set a new password with a reset link; signs out every session',
      },
      successStatus: 204,
      rateLimit: { name: 'auth.reset', max: 20, windowMs: 15 * MINUTE },
      errors: ['token_invalid'],
    })
    .input(ZResetInput)
    .output(z.void())
    .mutation(({ ctx, input }) => resetPassword(ctx, input)),
});
