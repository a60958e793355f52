import { zodResolver } from '@hookform/resolvers/zod';
import { ZPassword } from '@svc/schemas';
import { useMutation } from '@tanstack/react-query';
import { Link, useSearch } from '@tanstack/react-router';
import { useForm } from 'react-hook-form';
import { z } from 'zod';
import { trpc } from '../../api';
import { ErrorNote } from '../../ui/feedback';
import { TextInput } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { AuthFrame } from './AuthFrame';
import { buttonClass } from '../../ui/button';

const ZNewPassword = z.object({ password: ZPassword });

/** Where the e-mailed reset link lands (`/dashboard/reset-password?token=…`). */
export function ResetPassword() {
  const { token } = useSearch({ from: '/reset-password' });
  const form = useForm<z.infer<typeof ZNewPassword>>({ resolver: zodResolver(ZNewPassword) });
  const reset = useMutation(trpc.auth.reset.mutationOptions());
  if (!token) {
    return (
      <AuthFrame title="Reset your password">
        <p>This link is incomplete. Ask for a new one.</p>
        <Link to="/forgot-password">Send me a new link</Link>
      </AuthFrame>
    );
  }
  return (
    <AuthFrame title="Choose a new password">
      {reset.isSuccess ? (
        <>
          <p role="status">Your password is changed. Every other session was signed out.</p>
          <Link to="/sign-in">Sign in</Link>
        </>
      ) : (
        <form noValidate onSubmit={onValid(form, ({ password }) => reset.mutate({ token, password }))}>
          <TextInput
            label="New password"
            type="password"
            autoComplete="new-password"
            hint="At least 10 characters."
            registration={form.register('password')}
            error={form.formState.errors.password}
          />
          <ErrorNote error={reset.error} />
          <button type="submit" className={buttonClass('primary')} disabled={reset.isPending}>
            Set password
          </button>
        </form>
      )}
    </AuthFrame>
  );
}
