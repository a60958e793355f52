/**
 * Account: the signed-in seller's sign-in details, password, sessions and two-factor sign-in
 * (auth.account, auth.sessions). A new password needs the current one and signs the other
 * sessions out; `Sign out everywhere` ends every session but this one. Setting two-factor sign-in
 * up shows a QR code and the secret as text, and turns on with a first code from the app; the ten
 * recovery codes are shown once, then only how many are left. Turning it off takes the password.
 */
import { zodResolver } from '@hookform/resolvers/zod';
import { ZChangeEmailInput, ZChangePasswordInput, ZConfirmTwoFactorInput } from '@svc/schemas';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { z } from 'zod';
import { trpc, type RouterOutputs } from '../../api';
import { buttonClass } from '../../ui/button';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { TextInput } from '../../ui/fields';
import { FormError } from '../../ui/form-error';
import { onValid } from '../../ui/forms';
import { formatDateTime } from '../../ui/format';
import { Card, PageHeader, Stack } from '../../ui/layout';
import { DataTable } from '../../ui/table';

type Account = RouterOutputs['auth']['account'];
const accountQuery = trpc.auth.account.queryOptions();
const sessionsQuery = trpc.auth.sessions.queryOptions();

export function Account() {
  const account = useQuery(accountQuery);
  return (
    <main id="main" className="min-h-screen bg-surface px-4 py-8 sm:px-8">
      <div className="mx-auto w-full max-w-3xl min-w-0">
        <PageHeader
          title="Account"
          description="How you sign in to svc."
          back={<Link to="/">Back to your stores</Link>}
        />
        <Loaded query={account} label="Loading your account…">
          {(data) => (
            <Stack>
              <Card id="account-details" title="Sign-in details">
                <dl className="m-0 grid grid-cols-[auto_1fr] gap-x-6 gap-y-2 text-sm">
                  <dt className="text-muted">Email</dt>
                  <dd className="m-0 break-all">{data.user.email}</dd>
                </dl>
                <EmailChange />
              </Card>
              <PasswordCard />
              <TwoFactorCard account={data} />
              <SessionsCard />
            </Stack>
          )}
        </Loaded>
      </div>
    </main>
  );
}

function TwoFactorCard({ account }: { account: Account }) {
  // The recovery codes of the enrolment just confirmed: shown until the seller says they kept them.
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | null>(null);
  const on = account.twoFactor.enabled;
  return (
    <Card
      id="two-factor"
      title="Two-factor sign-in"
      description={
        on
          ? `On: signing in asks for a code from your authenticator app. ${account.twoFactor.recoveryCodesLeft} recovery codes left.`
          : 'Off: your password alone signs you in.'
      }
    >
      {recoveryCodes ? (
        <RecoveryCodes codes={recoveryCodes} onDone={() => setRecoveryCodes(null)} />
      ) : on ? (
        <TurnOff />
      ) : (
        <SetUp onConfirmed={setRecoveryCodes} />
      )}
    </Card>
  );
}

function SetUp({ onConfirmed }: { onConfirmed: (codes: string[]) => void }) {
  const queryClient = useQueryClient();
  const setup = useMutation(trpc.auth.twoFactorSetup.mutationOptions());
  const form = useForm<z.infer<typeof ZConfirmTwoFactorInput>>({ resolver: zodResolver(ZConfirmTwoFactorInput) });
  const confirm = useMutation(
    trpc.auth.twoFactorConfirm.mutationOptions({
      onSuccess: async (result) => {
        onConfirmed(result.recoveryCodes);
        await queryClient.invalidateQueries({ queryKey: accountQuery.queryKey });
      },
    }),
  );
  if (!setup.data)
    return (
      <>
        <p className="mt-0 text-sm">
          Protect your account with a code from an authenticator app (1Password, Google Authenticator, Authy and the
          like) besides your password.
        </p>
        <ErrorNote error={setup.error} />
        <button
          type="button"
          className={buttonClass('primary')}
          disabled={setup.isPending}
          onClick={() => setup.mutate({})}
        >
          Set up two-factor sign-in
        </button>
      </>
    );
  return (
    <div className="flex flex-col gap-4 sm:flex-row sm:items-start">
      <img
        src={setup.data.qrCode}
        alt="QR code for your authenticator app"
        width={176}
        height={176}
        className="shrink-0 rounded-md border border-line bg-white p-1"
      />
      <div className="min-w-0 flex-1">
        <p className="mt-0 text-sm">Scan the QR code with your authenticator app, or type in this key:</p>
        <p className="text-sm">
          <code aria-label="Setup key" className="break-all font-mono">
            {setup.data.secret}
          </code>
        </p>
        <form noValidate onSubmit={onValid(form, (values) => confirm.mutate(values))}>
          <TextInput
            label="Code from the app"
            width="sm"
            inputMode="numeric"
            autoComplete="one-time-code"
            hint="The 6 digits the app shows now."
            registration={form.register('code')}
            error={form.formState.errors.code}
          />
          <FormError form={form} error={confirm.error} />
          <button type="submit" className={buttonClass('primary')} disabled={confirm.isPending}>
            Turn on
          </button>
        </form>
      </div>
    </div>
  );
}

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  return (
    <div role="region" aria-labelledby="recovery-codes">
      <h3 id="recovery-codes" className="mt-0 text-base">
        Your recovery codes
      </h3>
      <p className="text-sm">
        Two-factor sign-in is on. Keep these ten codes somewhere safe: each signs you in once without the app. They are
        shown only now.
      </p>
      <ul aria-label="Recovery codes" className="grid list-none grid-cols-2 gap-2 p-0 font-mono text-sm">
        {codes.map((code) => (
          <li key={code}>{code}</li>
        ))}
      </ul>
      <button type="button" className={buttonClass('primary')} onClick={onDone}>
        I have saved my recovery codes
      </button>
    </div>
  );
}

const ZTurnOff = z.object({ password: z.string().min(1, 'Enter your password.') });

function TurnOff() {
  const queryClient = useQueryClient();
  const form = useForm<z.infer<typeof ZTurnOff>>({ resolver: zodResolver(ZTurnOff) });
  const disable = useMutation(
    trpc.auth.twoFactorDisable.mutationOptions({
      onSuccess: async () => {
        form.reset();
        await queryClient.invalidateQueries({ queryKey: accountQuery.queryKey });
      },
    }),
  );
  return (
    <form noValidate onSubmit={onValid(form, (values) => disable.mutate(values))}>
      <TextInput
        label="Password"
        type="password"
        autoComplete="current-password"
        hint="Turning two-factor sign-in off needs your password; the recovery codes stop working."
        registration={form.register('password')}
        error={form.formState.errors.password}
      />
      <FormError form={form} error={disable.error} />
      <button type="submit" className={buttonClass('secondary')} disabled={disable.isPending}>
        Turn off two-factor sign-in
      </button>
    </form>
  );
}

const ZPasswordForm = ZChangePasswordInput.extend({ confirmPassword: z.string() }).refine(
  (values) => values.newPassword === values.confirmPassword,
  { message: 'The two new passwords differ.', path: ['confirmPassword'] },
);

function PasswordCard() {
  const queryClient = useQueryClient();
  const [saved, setSaved] = useState(false);
  const form = useForm<z.infer<typeof ZPasswordForm>>({ resolver: zodResolver(ZPasswordForm) });
  const change = useMutation(
    trpc.auth.changePassword.mutationOptions({
      onSuccess: async () => {
        form.reset();
        setSaved(true);
        await queryClient.invalidateQueries({ queryKey: sessionsQuery.queryKey });
      },
    }),
  );
  return (
    <Card
      id="password"
      title="Password"
      description="A new password signs you out everywhere else; this session stays."
    >
      <form
        noValidate
        onSubmit={onValid(form, ({ currentPassword, newPassword }) => {
          setSaved(false);
          change.mutate({ currentPassword, newPassword });
        })}
      >
        <TextInput
          label="Current password"
          type="password"
          autoComplete="current-password"
          registration={form.register('currentPassword')}
          error={form.formState.errors.currentPassword}
        />
        <TextInput
          label="New password"
          type="password"
          autoComplete="new-password"
          hint="At least 10 characters."
          registration={form.register('newPassword')}
          error={form.formState.errors.newPassword}
        />
        <TextInput
          label="Repeat the new password"
          type="password"
          autoComplete="new-password"
          registration={form.register('confirmPassword')}
          error={form.formState.errors.confirmPassword}
        />
        <FormError form={form} error={change.error} />
        {saved && (
          <p role="status" className="text-sm">
            Password changed. Your other sessions are signed out.
          </p>
        )}
        <button type="submit" className={buttonClass('primary')} disabled={change.isPending}>
          Change password
        </button>
      </form>
    </Card>
  );
}

function SessionsCard() {
  const queryClient = useQueryClient();
  const sessions = useQuery(sessionsQuery);
  const signOut = useMutation(
    trpc.auth.signOutOthers.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: sessionsQuery.queryKey }),
    }),
  );
  const others = (sessions.data?.sessions.length ?? 1) - 1;
  return (
    <Card
      id="sessions"
      title="Sessions"
      description="Where your account is signed in."
      actions={
        <button
          type="button"
          className={buttonClass('secondary')}
          disabled={signOut.isPending || others < 1}
          onClick={() => signOut.mutate({})}
        >
          Sign out everywhere
        </button>
      }
      flush
    >
      {signOut.error ? (
        <div className="px-5 pt-4">
          <ErrorNote error={signOut.error} />
        </div>
      ) : null}
      <Loaded query={sessions} label="Loading your sessions…" lines={3}>
        {(data) => (
          <DataTable
            caption="Sessions"
            bare
            empty="No session."
            rows={data.sessions}
            rowKey={(row) => row.id}
            columns={[
              { header: 'Signed in', cell: (row) => formatDateTime(row.createdAt) },
              { header: 'Last seen', cell: (row) => formatDateTime(row.lastSeenAt) },
              { header: 'Session', cell: (row) => (row.current ? 'This session' : 'Elsewhere') },
            ]}
          />
        )}
      </Loaded>
    </Card>
  );
}

function EmailChange() {
  const [sentTo, setSentTo] = useState<string | null>(null);
  const form = useForm<z.input<typeof ZChangeEmailInput>, unknown, z.output<typeof ZChangeEmailInput>>({
    resolver: zodResolver(ZChangeEmailInput),
  });
  const change = useMutation(
    trpc.auth.changeEmail.mutationOptions({
      onSuccess: (_result, input) => {
        setSentTo(input.newEmail);
        form.reset();
      },
    }),
  );
  return (
    <form
      noValidate
      className="mt-4 border-t border-line pt-4"
      onSubmit={onValid(form, (values) => {
        setSentTo(null);
        change.mutate(values);
      })}
    >
      <TextInput
        label="New e-mail address"
        type="email"
        autoComplete="email"
        hint="We mail a link to it; the address changes when the link is opened."
        registration={form.register('newEmail')}
        error={form.formState.errors.newEmail}
      />
      <TextInput
        label="Your password"
        type="password"
        autoComplete="current-password"
        registration={form.register('password')}
        error={form.formState.errors.password}
      />
      <FormError form={form} error={change.error} />
      {sentTo && (
        <p role="status" className="text-sm">
          We sent a link to {sentTo}. Open it to finish the change; your current address was told.
        </p>
      )}
      <button type="submit" className={buttonClass('secondary')} disabled={change.isPending}>
        Change e-mail address
      </button>
    </form>
  );
}
