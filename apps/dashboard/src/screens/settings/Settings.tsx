/**
 * Settings: the store's name, currency, payment gateways, manual payment instructions, e-mail order
 * access, receipts and allowed origins (stores.update, manageSettings). The subdomain is the
 * storefront's address and the API does not change it: it is shown, read-only. A member without
 * manageSettings sees the same facts as a read-only list, with no form and no Save.
 */
import { zodResolver } from '@hookform/resolvers/zod';
import { PAYMENT_METHODS, ZOrigin, ZUpdateStoreInput } from '@svc/schemas';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { inferRouterOutputs } from '@trpc/server';
import { useForm, type UseFormRegisterReturn } from 'react-hook-form';
import { z } from 'zod';
import type { AppRouter } from '@svc/server/dist/trpc/app-router.js';
import { trpc } from '../../api';
import { storesQuery, useStore, useStoreId } from '../../store';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { CheckboxGroup, TextArea, TextInput } from '../../ui/fields';
import { onValid } from '../../ui/forms';

type Store = inferRouterOutputs<AppRouter>['stores']['get'];

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

const ZSettingsForm = z.object({
  name: update.name.unwrap(),
  currency: update.currency.unwrap(),
  paymentMethods: settings.paymentMethods.unwrap(),
  manualPaymentInstructions: settings.manualPaymentInstructions.unwrap(),
  emailOrderAccess: settings.emailOrderAccess.unwrap(),
  receiptsEnabled: settings.receiptsEnabled.unwrap(),
  receiptNote: settings.receiptNote.unwrap(),
  allowedOrigins: originLines,
});
type FormIn = z.input<typeof ZSettingsForm>;
type FormOut = z.output<typeof ZSettingsForm>;

function formValues(store: Store): FormIn {
  return {
    name: store.name,
    currency: store.currency,
    paymentMethods: store.settings.paymentMethods,
    manualPaymentInstructions: store.settings.manualPaymentInstructions,
    emailOrderAccess: store.settings.emailOrderAccess,
    receiptsEnabled: store.settings.receiptsEnabled,
    receiptNote: store.settings.receiptNote,
    allowedOrigins: store.allowedOrigins.join('\n'),
  };
}

export function Settings() {
  const storeId = useStoreId();
  const { can } = useStore();
  const store = useQuery(trpc.stores.get.queryOptions({ storeId }));
  return (
    <>
      <h1>Settings</h1>
      <Loaded query={store} label="Loading settings…">
        {(data) =>
          can('manageSettings') ? <SettingsForm key={data.id} store={data} /> : <SettingsView store={data} />
        }
      </Loaded>
    </>
  );
}

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
    const { allowedOrigins, name, currency, ...rest } = values;
    save.mutate({ storeId: store.id, name, currency, allowedOrigins, settings: rest });
  };
  const status = form.formState.isDirty ? 'Unsaved changes.' : save.isSuccess ? 'Saved.' : '';
  return (
    <form noValidate onSubmit={onValid(form, submit)} className="settings">
      <h2>Store</h2>
      <TextInput label="Store name" registration={form.register('name')} error={errors.name} />
      <div className="field">
        <label htmlFor="store-subdomain">Subdomain</label>
        <input id="store-subdomain" readOnly value={store.subdomain} aria-describedby="store-subdomain-note" />
        <span className="hint" id="store-subdomain-note">
          {SUBDOMAIN_NOTE}
        </span>
      </div>
      <TextInput
        label="Currency"
        hint="ISO 4217 code, such as USD or EUR. Orders already placed keep their currency."
        maxLength={3}
        registration={form.register('currency')}
        error={errors.currency}
      />

      <h2>Payments</h2>
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

      <h2>Buyers</h2>
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

      <h2>Theme origins</h2>
      <TextArea
        label="Allowed origins"
        hint="One a line, such as https://shop.example.com: sites that may call the customer routes from a browser."
        registration={form.register('allowedOrigins')}
        error={errors.allowedOrigins}
      />

      <ErrorNote error={save.error} />
      <div className="actions">
        <button type="submit" className="button primary" disabled={save.isPending}>
          Save
        </button>
        <p role="status" className="muted">
          {status}
        </p>
      </div>
    </form>
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
        <dt>Allowed origins</dt>
        <dd>{store.allowedOrigins.length ? store.allowedOrigins.join(', ') : 'None'}</dd>
      </dl>
    </>
  );
}
