/**
 * Settings: the store's name, currency, payment gateways, manual payment instructions, e-mail order
 * access, receipts, allowed origins and tax (TaxSettings.tsx) (stores.update, manageSettings). The subdomain is the
 * storefront's address and the API does not change it: it is shown, read-only. A member without
 * manageSettings sees the same facts as a read-only list, with no form and no Save. `Delete test
 * data` (manageSettings) starts the background job that deletes the store's test-mode objects and
 * shows its status until it finishes. The owner alone sees `Require two-factor sign-in for staff`
 * (stores.setRequireTwoFactor, owner only), saved on its own.
 */
import { zodResolver } from '@hookform/resolvers/zod';
import { PAYMENT_METHODS, ZAccentColor, ZOrigin, ZUpdateStoreInput } from '@svc/schemas';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { useForm, type UseFormRegisterReturn } from 'react-hook-form';
import { z } from 'zod';
import { deleteRoute, trpc, type RouterOutputs } from '../../api';
import { storesQuery, useStore, useStoreId } from '../../store';
import { ConfirmAction } from '../../ui/dialogs';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { FormError } from '../../ui/form-error';
import { Card, PageHeader, Stack } from '../../ui/layout';
import { CheckboxGroup, TextArea, TextInput } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { UploadField, useUpload } from '../../ui/upload';
import { ViewStoreLink } from '../../ui/view-store';
import { buttonClass } from '../../ui/button';
import { TaxCard, taxFormValues, taxSummary, ZTaxForm } from './TaxSettings';

type Store = RouterOutputs['stores']['get'];

const PAYMENT_LABELS: Record<(typeof PAYMENT_METHODS)[number], string> = {
  manual: 'Manual payment (bank transfer and the like)',
  stripe: 'Stripe',
  test: 'Test gateway (not in production)',
};
const paymentOptions = PAYMENT_METHODS.map((value) => ({ value, label: PAYMENT_LABELS[value] }));

// The form is built from ZUpdateStoreInput's own parts: the same rules as the server's.
const update = ZUpdateStoreInput.shape;
const settings = update.settings.unwrap().shape;

/** One origin a line; each line checked with the server's ZOrigin, the list with its limit. */
const originLines = z
  .string()
  .transform((text, ctx) => {
    const lines = text
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    for (const line of lines) {
      const checked = ZOrigin.safeParse(line);
      if (!checked.success) ctx.addIssue({ code: 'custom', message: `${line}: ${checked.error.issues[0]?.message}` });
    }
    return lines;
  })
  .pipe(update.allowedOrigins.unwrap());

/** Empty is the default colour (null); anything else a #rrggbb, checked with the server's ZAccentColor. */
const accentField = z.string().transform((text, ctx) => {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  const checked = ZAccentColor.safeParse(trimmed);
  if (checked.success) return checked.data;
  ctx.addIssue({ code: 'custom', message: checked.error.issues[0]?.message ?? 'a colour as #rrggbb' });
  return z.NEVER;
});

const ZSettingsForm = z.object({
  name: update.name.unwrap(),
  description: update.description.unwrap(),
  accentColor: accentField,
  currency: update.currency.unwrap(),
  paymentMethods: settings.paymentMethods.unwrap(),
  manualPaymentInstructions: settings.manualPaymentInstructions.unwrap(),
  emailOrderAccess: settings.emailOrderAccess.unwrap(),
  receiptsEnabled: settings.receiptsEnabled.unwrap(),
  receiptNote: settings.receiptNote.unwrap(),
  subscriptionGraceDays: settings.subscriptionGraceDays.unwrap(),
  licenseLeaseDays: settings.licenseLeaseDays.unwrap(),
  allowedOrigins: originLines,
  tax: ZTaxForm,
});

/** A number field's text as a number (the schema then says what is wrong with it); empty as NaN, refused. */
const wholeNumber = (text: unknown) => (text === '' ? Number.NaN : Number(text));
type FormIn = z.input<typeof ZSettingsForm>;
type FormOut = z.output<typeof ZSettingsForm>;

function formValues(store: Store): FormIn {
  return {
    name: store.name,
    description: store.description,
    accentColor: store.accentColor ?? '',
    // A text field: a currency stored before the ISO 4217 list is shown as it is, and refused only if saved.
    currency: store.currency as FormIn['currency'],
    paymentMethods: store.settings.paymentMethods,
    manualPaymentInstructions: store.settings.manualPaymentInstructions,
    emailOrderAccess: store.settings.emailOrderAccess,
    receiptsEnabled: store.settings.receiptsEnabled,
    receiptNote: store.settings.receiptNote,
    subscriptionGraceDays: store.settings.subscriptionGraceDays,
    licenseLeaseDays: store.settings.licenseLeaseDays,
    allowedOrigins: store.allowedOrigins.join('\n'),
    tax: taxFormValues(store.settings.tax),
  };
}

export function Settings() {
  const storeId = useStoreId();
  const { can, isOwner } = useStore();
  const store = useQuery(trpc.stores.get.queryOptions({ storeId }));
  return (
    <>
      <PageHeader title="Settings" description="Your store's name, look, payments and what buyers receive." />
      <Loaded query={store} label="Loading settings…" lines={8}>
        {(data) => (
          <Stack className="max-w-3xl">
            <ViewStoreLink subdomain={data.subdomain} />
            {can('manageSettings') ? (
              <>
                <SettingsForm key={data.id} store={data} />
                {isOwner && <TwoFactorPolicy key={`${data.id}-2fa`} store={data} />}
                <StoreLogo store={data} />
                <TestData storeId={data.id} />
              </>
            ) : (
              <SettingsView store={data} />
            )}
          </Stack>
        )}
      </Loaded>
    </>
  );
}

/** The storefront's colour when the store has none (storefront.css). */
const DEFAULT_ACCENT = '#1d4ed8';

const SUBDOMAIN_NOTE = 'The subdomain is the storefront’s address; it cannot be changed after the store is created.';

function SettingsForm({ store }: { store: Store }) {
  const queryClient = useQueryClient();
  const form = useForm<FormIn, unknown, FormOut>({
    resolver: zodResolver(ZSettingsForm),
    defaultValues: formValues(store),
  });
  const errors = form.formState.errors;
  const save = useMutation(
    trpc.stores.update.mutationOptions({
      onSuccess: async (saved) => {
        form.reset(formValues(saved));
        queryClient.setQueryData(trpc.stores.get.queryKey({ storeId: saved.id }), saved);
        // The store switcher shows the name.
        await queryClient.invalidateQueries({ queryKey: storesQuery.queryKey });
      },
    }),
  );
  const submit = (values: FormOut) => {
    const { allowedOrigins, name, currency, description, accentColor, ...rest } = values;
    save.mutate({ storeId: store.id, name, currency, description, accentColor, allowedOrigins, settings: rest });
  };
  const status = form.formState.isDirty ? 'Unsaved changes.' : save.isSuccess ? 'Saved.' : '';
  return (
    <form noValidate onSubmit={onValid(form, submit)} className="flex flex-col gap-6">
      <Card id="settings-store" title="Store">
        <TextInput label="Store name" width="md" registration={form.register('name')} error={errors.name} />
        <div className="field max-w-sm">
          <label htmlFor="store-subdomain">Subdomain</label>
          <input id="store-subdomain" readOnly value={store.subdomain} aria-describedby="store-subdomain-note" />
          <span className="hint" id="store-subdomain-note">
            {SUBDOMAIN_NOTE}
          </span>
        </div>
        <TextInput
          label="Currency"
          width="sm"
          hint="ISO 4217 code, such as USD or EUR. Orders already placed keep their currency."
          maxLength={3}
          registration={form.register('currency')}
          error={errors.currency}
        />
      </Card>

      <Card id="settings-storefront" title="Storefront">
        <TextArea
          label="Store description"
          hint="Plain text the storefront shows under the store's name, and in search results."
          registration={form.register('description')}
          error={errors.description}
        />
        <AccentColour form={form} />
      </Card>

      <Card id="settings-payments" title="Payments">
        <CheckboxGroup
          legend="Payment methods"
          registration={form.register('paymentMethods')}
          // The one way to fail here is to tick none (the schema's min(1)): said in words.
          error={errors.paymentMethods ? { type: 'min', message: 'Choose at least one payment method.' } : undefined}
          options={paymentOptions}
        />
        <TextArea
          label="Manual payment instructions"
          hint="Shown to buyers who choose manual payment: bank details, reference to quote."
          registration={form.register('manualPaymentInstructions')}
          error={errors.manualPaymentInstructions}
        />
      </Card>

      <Card id="settings-buyers" title="Buyers">
        <Checkbox
          label="Let buyers open an order with their e-mail address"
          hint="Besides the link with the order's token."
          registration={form.register('emailOrderAccess')}
        />
        <Checkbox label="E-mail a receipt when an order is paid" registration={form.register('receiptsEnabled')} />
        <TextArea
          label="Receipt note"
          hint="Plain text the receipt ends with: a support address, thanks. Empty for none."
          registration={form.register('receiptNote')}
          error={errors.receiptNote}
        />
      </Card>

      <Card id="settings-licenses" title="Licenses">
        <TextInput
          label="Subscription grace days"
          width="sm"
          type="number"
          min={0}
          max={30}
          hint="Days a subscription's licenses stay valid after a renewal fails (0 to 30)."
          registration={form.register('subscriptionGraceDays', { setValueAs: wholeNumber })}
          error={errors.subscriptionGraceDays}
        />
        <TextInput
          label="Offline lease days"
          width="sm"
          type="number"
          min={1}
          max={90}
          hint="How long your software may run on a signed lease without calling home (1 to 90); never past the license's own end."
          registration={form.register('licenseLeaseDays', { setValueAs: wholeNumber })}
          error={errors.licenseLeaseDays}
        />
      </Card>

      <Card id="settings-origins" title="Theme origins">
        <TextArea
          label="Allowed origins"
          hint="One a line, such as https://shop.example.com: sites that may call the customer routes from a browser."
          registration={form.register('allowedOrigins')}
          error={errors.allowedOrigins}
        />
      </Card>

      <TaxCard form={form} />

      <FormError form={form} error={save.error} />
      <div className="sticky bottom-0 z-10 -mx-1 flex flex-wrap items-center gap-3 rounded-lg border border-line bg-raised px-4 py-3 shadow-md">
        <button type="submit" className={buttonClass('primary')} disabled={save.isPending}>
          Save
        </button>
        <p role="status" className="m-0 text-sm text-muted">
          {status}
        </p>
      </div>
    </form>
  );
}

/** The accent colour: a text field (#rrggbb, empty for the default) and the browser's colour picker beside it. */
function AccentColour({ form }: { form: ReturnType<typeof useForm<FormIn, unknown, FormOut>> }) {
  const id = useId();
  const value = form.watch('accentColor');
  const error = form.formState.errors.accentColor;
  return (
    <div className="field max-w-sm">
      <label htmlFor={`${id}-text`}>Accent colour</label>
      <div className="colour-field">
        <input
          type="color"
          aria-label="Pick the accent colour"
          value={/^#[0-9a-fA-F]{6}$/.test(value.trim()) ? value.trim().toLowerCase() : DEFAULT_ACCENT}
          onChange={(event) => form.setValue('accentColor', event.target.value, { shouldDirty: true })}
        />
        <input
          id={`${id}-text`}
          placeholder={DEFAULT_ACCENT}
          aria-invalid={error ? true : undefined}
          aria-describedby={`${id}-hint${error ? ` ${id}-error` : ''}`}
          {...form.register('accentColor')}
        />
      </div>
      <span className="hint" id={`${id}-hint`}>
        As #rrggbb. It draws the storefront's borders, never text. Empty for the default blue.
      </span>
      {error && (
        <span className="field-error" id={`${id}-error`}>
          {error.message}
        </span>
      )}
    </div>
  );
}

/** The store's logo: a preview, an upload with its progress (replacing the old one), and Remove. */
function StoreLogo({ store }: { store: Store }) {
  const queryClient = useQueryClient();
  const id = useId();
  const refresh = () => queryClient.invalidateQueries(trpc.stores.get.queryFilter({ storeId: store.id }));
  const base = `/api/dashboard/stores/${encodeURIComponent(store.id)}/logo`;
  const { input, progress, status, setStatus, problem, upload, submit } = useUpload({
    url: base,
    empty: 'Choose an image first.',
    uploaded: () => 'Logo uploaded.',
    onDone: refresh,
  });
  const remove = useMutation({
    mutationFn: () => deleteRoute(base),
    onSuccess: async () => {
      setStatus('Logo removed.');
      await refresh();
    },
  });
  return (
    <Card id={`${id}-title`} title="Logo">
      {store.logoUrl ? (
        <p>
          <img className="logo-preview" src={store.logoUrl} alt={`${store.name} logo`} />
        </p>
      ) : (
        <p>No logo: the storefront shows the store's name alone.</p>
      )}
      <form noValidate onSubmit={submit}>
        <UploadField
          id={id}
          label="Logo image"
          accept="image/png,image/jpeg,image/webp"
          hint="PNG, JPEG or WebP, at most 1 MB. It replaces the current logo."
          input={input}
          problem={problem}
          progress={progress}
        />
        <ErrorNote error={upload.error ?? remove.error} />
        <div className="actions">
          <button type="submit" className={buttonClass('primary')} disabled={upload.isPending}>
            Upload logo
          </button>
          {store.logoUrl && (
            <button
              type="button"
              className={buttonClass('secondary')}
              disabled={remove.isPending}
              onClick={() => remove.mutate()}
            >
              Remove logo
            </button>
          )}
        </div>
        <p role="status">{status}</p>
      </form>
    </Card>
  );
}

/**
 * The owner's rule that every member signs in with two factors. Saved on its own, with its own
 * button: it shuts out members without two-factor sign-in, so it does not ride along with a
 * change of the store's name. The server refuses it to an owner without two-factor sign-in; the
 * refusal is shown here.
 */
function TwoFactorPolicy({ store }: { store: Store }) {
  const id = useId();
  const queryClient = useQueryClient();
  const [on, setOn] = useState(store.requireTwoFactor);
  const save = useMutation(
    trpc.stores.setRequireTwoFactor.mutationOptions({
      onSuccess: async (saved) => {
        queryClient.setQueryData(trpc.stores.get.queryKey({ storeId: saved.id }), saved);
        await queryClient.invalidateQueries({ queryKey: storesQuery.queryKey });
      },
    }),
  );
  const status = on !== store.requireTwoFactor ? 'Unsaved change.' : save.isSuccess ? 'Saved.' : '';
  return (
    <Card id={`${id}-title`} title="Security">
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          save.mutate({ storeId: store.id, requireTwoFactor: on });
        }}
      >
        <div className="field">
          <label className="check">
            <input
              type="checkbox"
              checked={on}
              aria-describedby={`${id}-hint`}
              aria-invalid={save.error ? true : undefined}
              onChange={(event) => setOn(event.target.checked)}
            />{' '}
            Require two-factor sign-in for staff
          </label>
          <span className="hint" id={`${id}-hint`}>
            Everyone who works in this store, you included, then needs a code from an authenticator app to sign in.
            Staff without two-factor sign-in are sent to their Account page to set it up. Yours must be on first.
          </span>
        </div>
        <ErrorNote error={save.error} />
        <div className="actions">
          <button type="submit" className={buttonClass('secondary')} disabled={save.isPending}>
            Apply two-factor rule
          </button>
          <p role="status" className="m-0 text-sm text-muted">
            {status}
          </p>
        </div>
      </form>
    </Card>
  );
}

/** A single checkbox bound to a boolean field, its label beside it. */
function Checkbox({
  label,
  hint,
  registration,
}: {
  label: string;
  hint?: string;
  registration: UseFormRegisterReturn;
}) {
  return (
    <div className="field">
      <label className="check">
        <input type="checkbox" {...registration} /> {label}
      </label>
      {hint && <span className="hint">{hint}</span>}
    </div>
  );
}

function SettingsView({ store }: { store: Store }) {
  const yes = (value: boolean) => (value ? 'Yes' : 'No');
  return (
    <>
      <p className="muted">You can read these settings; changing them needs the Manage settings permission.</p>
      <dl className="facts">
        <dt>Store name</dt>
        <dd>{store.name}</dd>
        <dt>Subdomain</dt>
        <dd>{store.subdomain}</dd>
        <dt>Currency</dt>
        <dd>{store.currency}</dd>
        <dt>Store description</dt>
        <dd>{store.description || '—'}</dd>
        <dt>Accent colour</dt>
        <dd>{store.accentColor ?? 'Default'}</dd>
        <dt>Payment methods</dt>
        <dd>{store.settings.paymentMethods.map((method) => PAYMENT_LABELS[method]).join(', ')}</dd>
        <dt>Manual payment instructions</dt>
        <dd>{store.settings.manualPaymentInstructions || '—'}</dd>
        <dt>Buyers may open an order with their e-mail</dt>
        <dd>{yes(store.settings.emailOrderAccess)}</dd>
        <dt>Receipts e-mailed</dt>
        <dd>{yes(store.settings.receiptsEnabled)}</dd>
        <dt>Receipt note</dt>
        <dd>{store.settings.receiptNote || '—'}</dd>
        <dt>Subscription grace days</dt>
        <dd>{store.settings.subscriptionGraceDays}</dd>
        <dt>Offline lease days</dt>
        <dd>{store.settings.licenseLeaseDays}</dd>
        <dt>Allowed origins</dt>
        <dd>{store.allowedOrigins.length ? store.allowedOrigins.join(', ') : 'None'}</dd>
        <dt>Tax</dt>
        <dd>{taxSummary(store.settings.tax)}</dd>
        <dt>Two-factor sign-in required of staff</dt>
        <dd>{yes(store.requireTwoFactor)}</dd>
      </dl>
    </>
  );
}

type TestDataJob = RouterOutputs['testData']['dashboardGet'];

/** A job still at work: its status is read again every second. */
const working = (job: TestDataJob | undefined) => job?.status === 'queued' || job?.status === 'running';

const rowCount = (job: TestDataJob) => Object.values(job.deleted).reduce((sum, n) => sum + n, 0);

function jobStatus(job: TestDataJob): string {
  switch (job.status) {
    case 'queued':
      return 'Deleting test data: waiting to start…';
    case 'running':
      return `Deleting test data… ${rowCount(job).toLocaleString('en')} rows so far.`;
    case 'succeeded':
      return `Test data deleted: ${rowCount(job).toLocaleString('en')} rows.`;
    case 'failed':
      return `Deleting test data failed: ${job.error ?? 'unknown error'}. Try again.`;
  }
}

/**
 * Deleting the store's test data (test mode): asks first, then starts the background job
 * (testData.dashboardDelete, 202) and polls its status (testData.dashboardGet) until it finishes.
 */
function TestData({ storeId }: { storeId: string }) {
  const id = useId();
  const queryClient = useQueryClient();
  const [jobId, setJobId] = useState<string | null>(null);
  const wipe = useMutation(
    trpc.testData.dashboardDelete.mutationOptions({
      onSuccess: (job) => {
        queryClient.setQueryData(trpc.testData.dashboardGet.queryKey({ storeId, jobId: job.id }), job);
        setJobId(job.id);
      },
    }),
  );
  const job = useQuery({
    ...trpc.testData.dashboardGet.queryOptions({ storeId, jobId: jobId ?? '' }),
    enabled: jobId !== null,
    refetchInterval: (query) => (working(query.state.data) ? 1_000 : false),
  });
  return (
    <Card id={`${id}-title`} title="Test data">
      <p>
        Deletes every test-mode object of this store: products, orders, customers, licenses, events, webhook endpoints
        and their deliveries, tickets, coupons and blacklist entries. Live data is never touched.
      </p>
      <div className="actions">
        <ConfirmAction
          verb="Delete test data"
          confirm="Delete"
          title="Delete this store’s test data?"
          onConfirm={() => wipe.mutateAsync({ storeId })}
          pending={wipe.isPending || working(job.data)}
          error={wipe.error}
        >
          <p>
            Every test-mode object of this store is deleted, in the background. This cannot be undone. Live data is not
            touched.
          </p>
        </ConfirmAction>
      </div>
      <ErrorNote error={job.error} />
      <p role="status">{job.data ? jobStatus(job.data) : ''}</p>
    </Card>
  );
}
