/** Seller sign-up, sign-in and password reset (no credential, same origin only), and the session itself. */
import {
  ZAccount,
  ZAccountSessions,
  ZAuthResult,
  ZChangeEmailInput,
  ZChangePasswordInput,
  ZConfirmEmailInput,
  ZConfirmTwoFactorInput,
  ZCredentials,
  ZDisableTwoFactorInput,
  ZEmailChanged,
  ZForgotInput,
  ZLoginInput,
  ZRecoveryCodes,
  ZRegenerateRecoveryCodesInput,
  ZResetInput,
  ZSignedOutOthers,
  ZTwoFactorSetup,
  ZUpdateAccountInput,
  ZUser,
} from '@svc/schemas';
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
import {
  changePassword,
  confirmEmailChange,
  listSessions,
  requestEmailChange,
  signOutOtherSessions,
  updateAccount,
} from '../../modules/identity/account.js';
import { clearSessionCookie, setSessionCookie } from '../../modules/identity/session-cookie.js';
import {
  confirmTwoFactor,
  disableTwoFactor,
  readAccount,
  regenerateRecoveryCodes,
  startTwoFactor,
} from '../../modules/identity/two-factor.js';

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
      // Past the account's attempts, the password must come with the code e-mailed to the account;
      // an account with two-factor sign-in wants the app's code (or a recovery code) as well.
      errors: ['unauthorized', 'sign_in_code_required', 'two_factor_required'],
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

  account: sessionProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/dashboard/account',
        tags,
        summary: 'The signed-in seller’s account and its two-factor state',
      },
      errors: [],
    })
    .input(z.strictObject({}).optional())
    .output(ZAccount)
    .query(({ ctx }) => readAccount(ctx, ctx.user.id)),

  updateAccount: sessionProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/dashboard/account',
        tags,
        summary: 'Change the account’s display name (null clears it)',
      },
      errors: [],
    })
    .input(ZUpdateAccountInput)
    .output(ZUser)
    .mutation(({ ctx, input }) => updateAccount(ctx, ctx.user.id, input)),

  twoFactorSetup: sessionProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/dashboard/account/two-factor/setup',
        tags,
        summary: 'Begin two-factor sign-in: a new TOTP secret, its otpauth URI and QR code (needs X-CSRF-Token)',
      },
      rateLimit: { name: 'auth.two_factor.setup', max: 10, windowMs: 60 * MINUTE },
      errors: ['conflict'],
    })
    .input(z.strictObject({}).optional())
    .output(ZTwoFactorSetup)
    .mutation(({ ctx }) => startTwoFactor(ctx, ctx.user.id)),

  twoFactorConfirm: sessionProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/dashboard/account/two-factor/confirm',
        tags,
        summary: 'Turn two-factor sign-in on with a first code; answers the ten recovery codes, once',
      },
      rateLimit: { name: 'auth.two_factor.confirm', max: 20, windowMs: 15 * MINUTE },
      errors: ['conflict'],
    })
    .input(ZConfirmTwoFactorInput)
    .output(ZRecoveryCodes)
    .mutation(async ({ ctx, input }) => ({ recoveryCodes: await confirmTwoFactor(ctx, ctx.user.id, input) })),

  twoFactorDisable: sessionProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/dashboard/account/two-factor/disable',
        tags,
        summary: 'Turn two-factor sign-in off, with the password or a current code',
      },
      successStatus: 204,
      rateLimit: { name: 'auth.two_factor.disable', max: 20, windowMs: 15 * MINUTE },
      errors: [],
    })
    .input(ZDisableTwoFactorInput)
    .output(z.void())
    .mutation(({ ctx, input }) => disableTwoFactor(ctx, ctx.user.id, input)),

  regenerateRecoveryCodes: sessionProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/dashboard/account/two-factor/recovery-codes',
        tags,
        summary:
          'Ten new recovery codes, with the password or a current code; the old ones stop working. Answers them, once',
      },
      rateLimit: { name: 'auth.two_factor.recovery_codes', max: 20, windowMs: 15 * MINUTE },
      errors: ['conflict'],
    })
    .input(ZRegenerateRecoveryCodesInput)
    .output(ZRecoveryCodes)
    .mutation(async ({ ctx, input }) => ({
      recoveryCodes: await regenerateRecoveryCodes(ctx, ctx.user.id, input),
    })),

  changePassword: sessionProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/dashboard/account/password',
        tags,
        summary: 'Change the password with the current one; signs the other sessions out, keeps this one',
      },
      successStatus: 204,
      rateLimit: { name: 'auth.password', max: 20, windowMs: 15 * MINUTE },
      errors: [],
    })
    .input(ZChangePasswordInput)
    .output(z.void())
    .mutation(({ ctx, input }) => changePassword(ctx, { userId: ctx.user.id, sessionToken: ctx.sessionToken }, input)),

  sessions: sessionProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/dashboard/account/sessions',
        tags,
        summary: 'The signed-in seller’s sessions, this one marked',
      },
      errors: [],
    })
    .input(z.strictObject({}).optional())
    .output(ZAccountSessions)
    .query(async ({ ctx }) => ({
      sessions: await listSessions(ctx, { userId: ctx.user.id, sessionToken: ctx.sessionToken }),
    })),

  signOutOthers: sessionProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/dashboard/account/sessions/sign-out-others',
        tags,
        summary: 'Sign out everywhere else (needs X-CSRF-Token): every other session of the account ends',
      },
      errors: [],
    })
    .input(z.strictObject({}).optional())
    .output(ZSignedOutOthers)
    .mutation(({ ctx }) => signOutOtherSessions(ctx, { userId: ctx.user.id, sessionToken: ctx.sessionToken })),

  changeEmail: sessionProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/dashboard/account/email',
        tags,
        summary: 'Change the e-mail address: a confirmation link goes to the new one, a notice to the old one',
      },
      successStatus: 204,
      rateLimit: { name: 'auth.email', max: 5, windowMs: 60 * MINUTE },
      errors: [],
    })
    .input(ZChangeEmailInput)
    .output(z.void())
    .mutation(({ ctx, input }) => requestEmailChange(ctx, ctx.user.id, input)),

  // The link's token is the credential: it may be opened in a browser where no one is signed in.
  confirmEmail: sellerAuthProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/auth/email/confirm',
        tags,
        summary: 'Confirm a new e-mail address with the link mailed to it',
      },
      rateLimit: { name: 'auth.email.confirm', max: 20, windowMs: 15 * MINUTE },
      errors: ['token_invalid', 'conflict'],
    })
    .input(ZConfirmEmailInput)
    .output(ZEmailChanged)
    .mutation(({ ctx, input }) => confirmEmailChange(ctx, input)),
});
