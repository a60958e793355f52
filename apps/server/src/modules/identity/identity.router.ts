import { ZAuthResult, ZCredentials, ZForgotInput, ZLoginInput, ZResetInput } from '@svc/schemas';
import { z } from 'zod';
import { clearCookie, setCookie } from '../../lib/cookies.js';
import type { Context } from '../../trpc/context.js';
import { sessionProcedure } from '../../trpc/guards.js';
import { publicProcedure, router } from '../../trpc/procedures.js';
import { login, logout, register, requestPasswordReset, resetPassword, toUserView, type SignedIn } from './identity.service.js';
import { SESSION_COOKIE, sessionCookieOptions } from './sessions.js';

const MINUTE = 60_000;
const tags = ['auth'];

/** Sets the session cookie and answers with the user and the CSRF token. */
function signedIn(ctx: Context, result: SignedIn) {
  setCookie(ctx.res, SESSION_COOKIE, result.session.token, sessionCookieOptions(ctx.deps.config));
  return { user: result.user, csrfToken: result.session.csrfToken };
}

export const identityRouter = router({
  register: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/register', tags, summary: 'Create a seller account and sign in', protect: false },
      successStatus: 201,
      rateLimit: { name: 'auth.register', max: 3, windowMs: 60 * MINUTE },
    })
    .input(ZCredentials)
    .output(ZAuthResult)
    .mutation(async ({ ctx, input }) => signedIn(ctx, await register(ctx, input))),

  login: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/login', tags, summary: 'Sign in; sets the svc_session cookie', protect: false },
      rateLimit: { name: 'auth.login', max: 20, windowMs: 15 * MINUTE },
    })
    .input(ZLoginInput)
    .output(ZAuthResult)
    .mutation(async ({ ctx, input }) => signedIn(ctx, await login(ctx, input))),

  logout: sessionProcedure
    .meta({ openapi: { method: 'POST', path: '/auth/logout', tags, summary: 'Sign out', protect: false }, auth: 'session', successStatus: 204 })
    .input(z.strictObject({}).optional())
    .output(z.void())
    .mutation(async ({ ctx }) => {
      await logout(ctx, ctx.sessionToken);
      clearCookie(ctx.res, SESSION_COOKIE, sessionCookieOptions(ctx.deps.config));
    }),

  session: sessionProcedure
    .meta({ openapi: { method: 'GET', path: '/auth/session', tags, summary: 'The signed-in user and the CSRF token', protect: false }, auth: 'session' })
    .input(z.strictObject({}).optional())
    .output(ZAuthResult)
    .query(({ ctx }) => ({ user: toUserView(ctx.user), csrfToken: ctx.session.csrfToken })),

  forgot: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/forgot', tags, summary: 'E-mail a password reset link (answers the same for unknown e-mails)', protect: false },
      successStatus: 204,
      rateLimit: { name: 'auth.forgot', max: 3, windowMs: 60 * MINUTE },
    })
    .input(ZForgotInput)
    .output(z.void())
    .mutation(({ ctx, input }) => requestPasswordReset(ctx, input)),

  reset: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/reset', tags, summary: 'Set a new password with a reset link; signs out every session', protect: false },
      successStatus: 204,
      rateLimit: { name: 'auth.reset', max: 20, windowMs: 15 * MINUTE },
    })
    .input(ZResetInput)
    .output(z.void())
    .mutation(({ ctx, input }) => resetPassword(ctx, input)),
});
