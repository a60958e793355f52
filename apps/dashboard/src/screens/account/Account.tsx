/**
 * Account: the signed-in seller's name, sign-in details, password, sessions and two-factor sign-in
 * (auth.account, auth.sessions). A new password needs the current one and signs the other
 * sessions out; `Sign out everywhere` ends every session but this one. Setting two-factor sign-in
 * up shows a QR code and the secret as text, and turns on with a first code from the app; the ten
 * recovery codes are shown once, then only how many are left. `Regenerate recovery codes` and
 * turning it off take the password. A store whose owner requires two-factor sign-in sends a
 * member without it here (api.ts): the page names the store and says why, above the setup.
 */
import { zodResolver } from '@hookform/resolvers/zod';
import { ZChangeEmailInput, ZChangePasswordInput, ZConfirmTwoFactorInput, ZUpdateAccountInput } from '@svc/schemas';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { z } from 'zod';
import { trpc, type RouterOutputs } from '../../api';
import { storesQuery } from '../../store';
import { buttonClass } from '../../ui/button';
import { FormDialog } from '../../ui/dialogs';
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
              <EnrolmentNotice account={data} />
              <NameCard account={data} />
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

/**
 * The stores whose owner requires two-factor sign-in, while this account has it off: why the
 * seller was sent here, and what to do.
 */
function EnrolmentNotice({ account }: { account: Account }) {
  const stores = useQuery(storesQuery);
  if (account.twoFactor.enabled) return null;
  const requiring = (stores.data?.stores ?? []).filter((store) => store.requireTwoFactor);
  if (requiring.length === 0) return null;
  const names = new Intl.ListFormat('en', { type: 'conjunction' }).format(requiring.map((store) => store.name));
  return (
    <div role="alert" className="rounded-md border-2 border-warning bg-warning-soft px-4 py-3 text-sm text-warning">
      <strong>Two-factor sign-in needed.</strong>{' '}
      <span>
        {names} {requiring.length === 1 ? 'requires' : 'require'} two-factor sign-in for everyone who works in{' '}
        {requiring.length === 1 ? 'it' : 'them'}. Set it up below, then go back to your stores.
      </span>
    </div>
  );
}

type NameForm = z.input<typeof ZNameForm>;
/** An empty field clears the name (null); anything else is the server's own rule. */
const ZNameForm = z.object({
  name: z
    .string()
    .transform((text) => (text.trim() === '' ? null : text))
    .pipe(ZUpdateAccountInput.shape.name),
});

function NameCard({ account }: { account: Account }) {
  const queryClient = useQueryClient();
  const form = useForm<NameForm, unknown, z.output<typeof ZNameForm>>({
    resolver: zodResolver(ZNameForm),
    defaultValues: { name: account.user.name ?? '' },
  });
  const save = useMutation(
    trpc.auth.updateAccount.mutationOptions({
      onSuccess: async (user) => {
        form.reset({ name: user.name ?? '' });
        await queryClient.invalidateQueries({ queryKey: accountQuery.queryKey });
      },
    }),
  );
  const status = form.formState.isDirty ? '' : save.isSuccess ? 'Saved.' : '';
  return (
    <Card
      id="account-name"
      title="Profile"
      description="Your name is shown to the people you work with, beside your e-mail address."
    >
      <form noValidate onSubmit={onValid(form, (values) => save.mutate(values))}>
        <TextInput
          label="Name"
          autoComplete="name"
          width="md"
          registration={form.register('name')}
          error={form.formState.errors.name}
        />
        <FormError form={form} error={save.error} />
        <div className="flex items-center gap-3">
          <button type="submit" className={buttonClass('primary')} disabled={save.isPending}>
            Save
          </button>
          <p role="status" className="m-0 text-sm">
            {status}
          </p>
        </div>
      </form>
    </Card>
  );
}

function TwoFactorCard({ account }: { account: Account }) {
  // The recovery codes just made (by the enrolment or anew): shown until the seller says they kept them.
  const [recoveryCodes, setRecoveryCodes] = useState<{ codes: string[]; fresh: boolean } | null>(null);
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
        <RecoveryCodes {...recoveryCodes} onDone={() => setRecoveryCodes(null)} />
      ) : on ? (
        <>
          <TurnOff />
          <div className="mt-4 border-t border-line pt-4">
            <p className="mt-0 text-sm">
              Lost your recovery codes, or used most of them? Make ten new ones; the old ones stop working.
            </p>
            <RegenerateCodes onMade={(codes) => setRecoveryCodes({ codes, fresh: true })} />
          </div>
        </>
      ) : (
        <SetUp onConfirmed={(codes) => setRecoveryCodes({ codes, fresh: false })} />
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

function RecoveryCodes({ codes, fresh, onDone }: { codes: string[]; fresh: boolean; onDone: () => void }) {
  return (
    <div role="region" aria-labelledby="recovery-codes">
      <h3 id="recovery-codes" className="mt-0 text-base">
        {fresh ? 'Your new recovery codes' : 'Your recovery codes'}
      </h3>
      <p className="text-sm">
        {fresh ? 'Your old recovery codes no longer work.' : 'Two-factor sign-in is on.'} Keep these ten codes somewhere
        safe: each signs you in once without the app. They are shown only now.
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

/** `Regenerate recovery codes`: asks for the password in a dialog, then the card shows the new codes. */
function RegenerateCodes({ onMade }: { onMade: (codes: string[]) => void }) {
  return (
    <FormDialog trigger="Regenerate recovery codes" title="New recovery codes">
      {(close) => (
        <RegenerateForm
          onMade={(codes) => {
            close();
            onMade(codes);
          }}
        />
      )}
    </FormDialog>
  );
}

function RegenerateForm({ onMade }: { onMade: (codes: string[]) => void }) {
  const queryClient = useQueryClient();
  const form = useForm<z.infer<typeof ZTurnOff>>({ resolver: zodResolver(ZTurnOff) });
  const regenerate = useMutation(
    trpc.auth.regenerateRecoveryCodes.mutationOptions({
      onSuccess: async (result) => {
        onMade(result.recoveryCodes);
        await queryClient.invalidateQueries({ queryKey: accountQuery.queryKey });
      },
    }),
  );
  return (
    <form noValidate onSubmit={onValid(form, (values) => regenerate.mutate(values))}>
      <TextInput
        label="Password"
        type="password"
        autoComplete="current-password"
        hint="Ten new codes replace the old ones, used or not."
        registration={form.register('password')}
        error={form.formState.errors.password}
      />
      <FormError form={form} error={regenerate.error} />
      <button type="submit" className={buttonClass('primary')} disabled={regenerate.isPending}>
        Make new codes
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
