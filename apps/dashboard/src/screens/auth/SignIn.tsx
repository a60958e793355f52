import { zodResolver } from '@hookform/resolvers/zod';
import { ZLoginInput } from '@svc/schemas';
import { useMutation } from '@tanstack/react-query';
import { Link, useRouter, useSearch } from '@tanstack/react-router';
import { useForm } from 'react-hook-form';
import type { z } from 'zod';
import { trpc } from '../../api';
import { ErrorNote } from '../../ui/feedback';
import { TextInput } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { safeRedirect, signedIn } from '../../session';
import { AuthFrame } from './AuthFrame';

export function SignIn() {
  const router = useRouter();
  const { redirect } = useSearch({ from: '/sign-in' });
  const form = useForm<z.infer<typeof ZLoginInput>>({ resolver: zodResolver(ZLoginInput) });
  const login = useMutation(
    trpc.auth.login.mutationOptions({
      onSuccess: (result) => {
        signedIn(result);
        void router.navigate({ href: safeRedirect(redirect) });
      },
    }),
  );
  return (
    <AuthFrame title="Sign in to svc">
      <form noValidate onSubmit={onValid(form, (values) => login.mutate(values))}>
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
          autoComplete="current-password"
          registration={form.register('password')}
          error={form.formState.errors.password}
        />
        <ErrorNote error={login.error} />
        <button type="submit" className="button primary" disabled={login.isPending}>
          Sign in
        </button>
      </form>
      <p>
        New to svc? <Link to="/register">Create account</Link>
      </p>
      <p>
        <Link to="/forgot-password">Forgot your password?</Link>
      </p>
    </AuthFrame>
  );
}
