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

/** To the new address: the link that confirms it. */
export function confirmEmailMail(link: string): IdentityMail {
  return {
    subject: 'Confirm your new svc e-mail address',
    text: `Someone asked to use this address for an svc account.\n\nTo confirm it, open:\n${link}\n\nThe link works once, for one hour. If it was not you, ignore this e-mail: nothing changes.`,
  };
}

/** To the old address, when the change is asked for and when it is done. */
export function emailChangeNotice(newEmail: string, done: boolean): IdentityMail {
  return done
    ? {
        subject: 'Your svc e-mail address was changed',
        text: `The e-mail address of your svc account is now ${newEmail}. This address no longer signs in.\n\nIf it was not you, someone has your password: reset it at once from the sign-in page.`,
      }
    : {
        subject: 'A change of your svc e-mail address was asked for',
        text: `Someone signed in to your svc account asked to change its e-mail address to ${newEmail}. It changes once the link sent there is opened.\n\nIf it was not you, change your password now: a new password signs every other session out.`,
      };
}
