/** The mail identity sends a seller: the password-reset link and the sign-in code. Plain text. */

export interface IdentityMail {
  subject: string;
  text: string;
}

export function resetLinkMail(link: string): IdentityMail {
  return {
    subject: 'Reset your svc password',
    text: `Someone asked to reset the password of this account.\n\nTo choose a new one, open:\n${link}\n\nThe link works once, for one hour. If it was not you, ignore this e-mail.`,
  };
}

/**
 * Sent only when the right password came after too many attempts on the account, so it also
 * tells the owner, if it was not them, that their password is known.
 */
export function signInCodeMail(code: string, resetUrl: string): IdentityMail {
  return {
    subject: 'Your svc sign-in code',
    text: [
      'Someone signed in to your svc account with its password, after too many sign-in attempts on it.',
      '',
      `To finish signing in, enter this code with your password: ${code}`,
      '',
      'It works once, for 15 minutes.',
      '',
      'If it was not you, someone knows your password: choose a new one now at',
      resetUrl,
      'A new password signs every session out.',
    ].join('\n'),
  };
}
