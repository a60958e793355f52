import { zodResolver } from '@hookform/resolvers/zod';
import { ZLoginInput } from '@svc/schemas';
import { useMutation } from '@tanstack/react-query';
import { Link, useRouter, useSearch } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { useForm } from 'react-hook-form';
import type { z } from 'zod';
import { apiFailure, trpc } from '../../api';
import { ErrorNote } from '../../ui/feedback';
import { TextInput } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { safeRedirect, signedIn } from '../../session';
import { AuthFrame } from './AuthFrame';
import { buttonClass } from '../../ui/button';

export function SignIn() {
  const router = useRouter();
  const { redirect } = useSearch({ from: '/sign-in' });
  const form = useForm<z.infer<typeof ZLoginInput>>({ resolver: zodResolver(ZLoginInput) });
  // Past the account's sign-in attempts the server asks for the code it e-mailed to the account
  // (when the password was right); once asked, the field stays for the next try.
  const [codeAsked, setCodeAsked] = useState(false);
  // An account with two-factor sign-in asks, after the right password, for the authenticator app's
  // code or a recovery code; the e-mailed code (when asked too) is sent again with it.
  const [twoFactorAsked, setTwoFactorAsked] = useState(false);
  const login = useMutation(
    trpc.auth.login.mutationOptions({
      onSuccess: (result) => {
        signedIn(result);
        void router.navigate({ href: safeRedirect(redirect) });
      },
      onError: (error) => {
        const code = apiFailure(error).code;
        if (code === 'sign_in_code_required') setCodeAsked(true);
        if (code === 'two_factor_required') setTwoFactorAsked(true);
      },
    }),
  );
  useEffect(() => {
    if (codeAsked) form.setFocus('code');
  }, [codeAsked, form]);
  useEffect(() => {
    if (twoFactorAsked) form.setFocus('twoFactorCode');
  }, [twoFactorAsked, form]);
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
        {codeAsked && (
          <TextInput
            label="Sign-in code"
            inputMode="numeric"
            autoComplete="one-time-code"
            hint="The 6 digits e-mailed to the account's address; a code works once, for 15 minutes. Left empty, signing in sends a new one."
            // Empty is no code: the password alone asks for one again.
            registration={form.register('code', {
              setValueAs: (value: string | undefined) => value?.trim() || undefined,
            })}
            error={form.formState.errors.code}
          />
        )}
        {twoFactorAsked && (
          <TextInput
            label="Authentication code"
            autoComplete="one-time-code"
            hint="The 6 digits your authenticator app shows, or one of your recovery codes."
            registration={form.register('twoFactorCode', {
              setValueAs: (value: string | undefined) => value?.trim() || undefined,
            })}
            error={form.formState.errors.twoFactorCode}
          />
        )}
        <ErrorNote error={login.error} />
        <button type="submit" className={buttonClass('primary')} disabled={login.isPending}>
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
