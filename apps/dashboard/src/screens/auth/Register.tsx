import { zodResolver } from '@hookform/resolvers/zod';
import { ZCredentials } from '@svc/schemas';
import { useMutation } from '@tanstack/react-query';
import { Link, useRouter } from '@tanstack/react-router';
import { useForm } from 'react-hook-form';
import type { z } from 'zod';
import { trpc } from '../../api';
import { signedIn } from '../../session';
import { ErrorNote } from '../../ui/feedback';
import { TextInput } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { AuthFrame } from './AuthFrame';
import { buttonClass } from '../../ui/button';

export function Register() {
  const router = useRouter();
  const form = useForm<z.infer<typeof ZCredentials>>({ resolver: zodResolver(ZCredentials) });
  const register = useMutation(
    trpc.auth.register.mutationOptions({
      onSuccess: (result) => {
        signedIn(result);
        void router.navigate({ to: '/stores/new' });
      },
    }),
  );
  return (
    <AuthFrame title="Create your svc account">
      <form noValidate onSubmit={onValid(form, (values) => register.mutate(values))}>
        <TextInput
          label="Email"
          type="email"
          autoComplete="email"
          registration={form.register('email')}
          error={form.formState.errors.email}
        />
        <TextInput
          label="Password"
          type="password"
          autoComplete="new-password"
          hint="At least 10 characters."
          registration={form.register('password')}
          error={form.formState.errors.password}
        />
        <ErrorNote error={register.error} />
        <button type="submit" className={buttonClass('primary')} disabled={register.isPending}>
          Create account
        </button>
      </form>
      <p>
        Already have an account? <Link to="/sign-in">Sign in</Link>
      </p>
    </AuthFrame>
  );
}
