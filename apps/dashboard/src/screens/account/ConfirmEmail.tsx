import { useMutation } from '@tanstack/react-query';
import { Link, useSearch } from '@tanstack/react-router';
import { trpc } from '../../api';
import { buttonClass } from '../../ui/button';
import { ErrorNote } from '../../ui/feedback';
import { AuthFrame } from '../auth/AuthFrame';

/**
 * Where the link mailed to a new address lands (`/dashboard/confirm-email?token=…`). It confirms
 * on a press, not on load: a mail scanner that opens links must not change the address.
 */
export function ConfirmEmail() {
  const { token } = useSearch({ from: '/confirm-email' });
  const confirm = useMutation(trpc.auth.confirmEmail.mutationOptions());
  if (!token)
    return (
      <AuthFrame title="Confirm your e-mail address">
        <p>This link is incomplete. Ask for the change again from your Account page.</p>
      </AuthFrame>
    );
  return (
    <AuthFrame title="Confirm your e-mail address">
      {confirm.data ? (
        <>
          <p role="status">Your e-mail address is now {confirm.data.email}. Sign in with it from now on.</p>
          <Link to="/">Open the dashboard</Link>
        </>
      ) : (
        <>
          <p>Use this address for your svc account?</p>
          <ErrorNote error={confirm.error} />
          <button
            type="button"
            className={buttonClass('primary')}
            disabled={confirm.isPending}
            onClick={() => confirm.mutate({ token })}
          >
            Confirm e-mail address
          </button>
        </>
      )}
    </AuthFrame>
  );
}
