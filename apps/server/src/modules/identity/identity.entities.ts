/** Identity owns people who sign in to the dashboard and their sessions. */
import { defineEntity, type InferEntity } from '@mikro-orm/core';

export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'user',
  checks: [{ name: 'user_email_lower', expression: 'email = lower(email)' }],
  properties: (p) => ({
    id: p.string().primary().length(32),
    /** Always stored lower-cased; the column has a check constraint saying so. */
    email: p.string().length(320).unique(),
    passwordHash: p.text().nullable(),
    /** The display name the seller gave on the Account page (1 to 100 characters), or null. */
    name: p.string().length(100).nullable(),
    /**
     * The TOTP secret (RFC 6238), sealed with a key derived from the app key (two-factor.ts). Set
     * while an enrolment is under way and while two-factor sign-in is on; `totpEnabledAt` says which.
     */
    totpSecretEnc: p.text().nullable(),
    totpEnabledAt: p.datetime().nullable(),
    /** The last 30-second step whose code was accepted: a code is taken once, not again in its window. */
    totpLastStep: p.integer().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});
export type User = InferEntity<typeof UserSchema>;

/** A dashboard session. The cookie holds the token; the row holds only its SHA-256. */
export const SessionSchema = defineEntity({
  name: 'Session',
  tableName: 'session',
  properties: (p) => ({
    idHash: p.string().primary().length(64),
    user: p
      .manyToOne(UserSchema)
      .ref()
      .foreignKeyName('session_user_id_fkey')
      .updateRule('no action')
      .deleteRule('cascade')
      .index(),
    csrfToken: p.string().length(64),
    createdAt: p.datetime(),
    /** When the session was last used, to the hour (sessions.ts writes it at most once an hour). */
    lastSeenAt: p.datetime().nullable(),
    expiresAt: p.datetime(),
  }),
});
export type Session = InferEntity<typeof SessionSchema>;

export const PasswordResetSchema = defineEntity({
  name: 'PasswordReset',
  tableName: 'password_reset',
  properties: (p) => ({
    tokenHash: p.string().primary().length(64),
    user: p
      .manyToOne(UserSchema)
      .ref()
      .foreignKeyName('password_reset_user_id_fkey')
      .updateRule('no action')
      .deleteRule('cascade')
      .index(),
    createdAt: p.datetime(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
  }),
});
export type PasswordReset = InferEntity<typeof PasswordResetSchema>;

/**
 * A one-time code for a sign-in past the account's attempts (identity.service.ts `login`): mailed
 * when the right password came, stored as an HMAC under a server key (six digits would fall to an
 * offline search of a plain hash), 15 minutes, 5 tries, used once. Codes still open all work, so a
 * second request does not void the one the seller is typing.
 */
export const SignInCodeSchema = defineEntity({
  name: 'SignInCode',
  tableName: 'sign_in_code',
  properties: (p) => ({
    id: p.string().primary().length(32),
    user: p
      .manyToOne(UserSchema)
      .ref()
      .foreignKeyName('sign_in_code_user_id_fkey')
      .updateRule('no action')
      .deleteRule('cascade')
      .index(),
    codeHash: p.string().length(64),
    attempts: p.integer().default(0),
    createdAt: p.datetime(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
  }),
});
export type SignInCode = InferEntity<typeof SignInCodeSchema>;

/**
 * One of the ten single-use recovery codes of an account with two-factor sign-in, stored as an
 * HMAC under a server key (as the sign-in codes are); shown to the owner once, when made.
 */
export const RecoveryCodeSchema = defineEntity({
  name: 'RecoveryCode',
  tableName: 'recovery_code',
  properties: (p) => ({
    id: p.string().primary().length(32),
    user: p
      .manyToOne(UserSchema)
      .ref()
      .foreignKeyName('recovery_code_user_id_fkey')
      .updateRule('no action')
      .deleteRule('cascade')
      .index(),
    codeHash: p.string().length(64),
    createdAt: p.datetime(),
    usedAt: p.datetime().nullable(),
  }),
});
export type RecoveryCode = InferEntity<typeof RecoveryCodeSchema>;

/**
 * A change of the account's e-mail address waiting for its confirmation: the link mailed to the
 * new address holds the token, the row only its SHA-256. One hour, used once.
 */
export const EmailChangeSchema = defineEntity({
  name: 'EmailChange',
  tableName: 'email_change',
  properties: (p) => ({
    tokenHash: p.string().primary().length(64),
    user: p
      .manyToOne(UserSchema)
      .ref()
      .foreignKeyName('email_change_user_id_fkey')
      .updateRule('no action')
      .deleteRule('cascade')
      .index(),
    newEmail: p.string().length(320),
    createdAt: p.datetime(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
  }),
});
export type EmailChange = InferEntity<typeof EmailChangeSchema>;
