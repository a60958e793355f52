import { zodResolver } from '@hookform/resolvers/zod';
import { ZForgotInput } from '@svc/schemas';
import { useMutation } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useForm } from 'react-hook-form';
import type { z } from 'zod';
import { trpc } from '../../api';
import { ErrorNote } from '../../ui/feedback';
import { TextInput } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { AuthFrame } from './AuthFrame';
import { buttonClass } from '../../ui/button';

export function ForgotPassword() {
  const form = useForm<z.infer<typeof ZForgotInput>>({ resolver: zodResolver(ZForgotInput) });
  const forgot = useMutation(trpc.auth.forgot.mutationOptions());
  return (
    <AuthFrame title="Reset your password">
      {forgot.isSuccess ? (
        <p role="status">If an account uses that address, a link to choose a new password is on its way.</p>
      ) : (
        <form noValidate onSubmit={onValid(form, (values) => forgot.mutate(values))}>
          <TextInput
            label="Email"
            type="email"
            autoComplete="email"
            registration={form.register('email')}
            error={form.formState.errors.email}
          />
          <ErrorNote error={forgot.error} />
          <button type="submit" className={buttonClass('primary')} disabled={forgot.isPending}>
            Send reset link
          </button>
        </form>
      )}
      <p>
        <Link to="/sign-in">Back to sign in</Link>
      </p>
    </AuthFrame>
  );
}
