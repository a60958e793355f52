/**
 * The store's tax (`settings.tax`), a section of the Settings form: how prices carry tax, the
 * country the seller is established in, where the store is registered (`EU`: the one-stop shop),
 * and the seller's name, address and tax id printed on invoices. Checked with the server's own
 * ZTaxSettingsInput; the server's refusals land on the same fields (FormError, by path).
 */
import { COUNTRY_CODES, TAX_BEHAVIORS, ZTaxSettingsInput, type TStoreSettings } from '@svc/schemas';
import { useId, useState } from 'react';
import type { FieldErrors, FieldValues, Path, PathValue, UseFormReturn } from 'react-hook-form';
import { z } from 'zod';
import { buttonClass } from '../../ui/button';
import { SelectInput, TextArea, TextInput } from '../../ui/fields';
import { Card } from '../../ui/layout';

type TaxSettings = TStoreSettings['tax'];

const BEHAVIOR_LABELS: Record<(typeof TAX_BEHAVIORS)[number], { label: string; hint: string }> = {
  off: { label: 'Off', hint: 'No tax is worked out; prices are what buyers pay.' },
  exclusive: { label: 'Prices exclude tax', hint: "The buyer's country's tax is added at checkout." },
  inclusive: { label: 'Prices include tax', hint: 'Buyers pay the price; the tax in it is shown and invoiced.' },
};

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
/** A country's English name (`DE` → Germany), the code itself where the browser knows no name. */
export function countryName(code: string): string {
  if (code === 'EU') return 'EU one-stop shop';
  try {
    return regionNames.of(code) ?? code;
  } catch {
    return code;
  }
}
const COUNTRIES = COUNTRY_CODES.map((code) => ({ value: code, label: countryName(code) })).sort((a, b) =>
  a.label.localeCompare(b.label, 'en'),
);

/** The form's tax part: text as the controls hold it (no origin is ''), then the server's schema. */
export const ZTaxForm = z
  .object({
    behavior: z.enum(TAX_BEHAVIORS),
    originCountry: z.string(),
    registrations: z.array(z.string()),
    sellerName: z.string(),
    sellerAddress: z.string(),
    sellerTaxId: z.string(),
  })
  // Empty fields are left out (the schema takes none rather than ''); required once tax is on, it then says so.
  .transform((tax): z.input<typeof ZTaxSettingsInput> => ({
    behavior: tax.behavior,
    originCountry: tax.originCountry || null,
    registrations: tax.registrations,
    sellerName: tax.sellerName.trim() || undefined,
    sellerAddress: tax.sellerAddress.trim() || undefined,
    sellerTaxId: tax.sellerTaxId.trim() || undefined,
  }))
  .pipe(ZTaxSettingsInput);
export type TaxFormIn = z.input<typeof ZTaxForm>;

export function taxFormValues(tax: TaxSettings): TaxFormIn {
  return {
    behavior: tax.behavior,
    originCountry: tax.originCountry ?? '',
    registrations: tax.registrations,
    sellerName: tax.sellerName,
    sellerAddress: tax.sellerAddress,
    sellerTaxId: tax.sellerTaxId,
  };
}

/** The tax settings as the read-only Settings list says them. */
export function taxSummary(tax: TaxSettings): string {
  if (tax.behavior === 'off') return 'Off';
  const where = tax.registrations.map(countryName).join(', ') || 'nowhere';
  return `${BEHAVIOR_LABELS[tax.behavior].label}; registered in ${where}; established in ${
    tax.originCountry ? countryName(tax.originCountry) : '—'
  }`;
}

const messageOf = (error: unknown): string | undefined =>
  error && typeof error === 'object' && 'message' in error && typeof error.message === 'string' && error.message
    ? error.message
    : undefined;

/**
 * What is wrong with the registrations: the list's own error (none given once tax is on), else the
 * first of its entries' (the server names `settings.tax.registrations.<n>`: no rates for that country).
 */
function registrationsError(error: unknown): string | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const own = messageOf(error) ?? messageOf((error as { root?: unknown }).root);
  if (own) return own;
  for (const entry of Object.values(error)) if (messageOf(entry)) return messageOf(entry);
  return undefined;
}

/** The form this section sits in: any form whose values hold the tax part under `tax`. */
type WithTax = FieldValues & { tax: TaxFormIn };

export function TaxCard<T extends WithTax, C, O extends FieldValues>({ form }: { form: UseFormReturn<T, C, O> }) {
  const id = useId();
  // Paths under `tax`, typed once for the form this card is given.
  const at = (field: keyof TaxFormIn) => `tax.${field}` as Path<T>;
  const errors = (form.formState.errors as FieldErrors<WithTax>).tax;
  const behavior = form.watch(at('behavior')) as TaxFormIn['behavior'];
  return (
    <Card
      id="settings-tax"
      title="Tax"
      description="Tax on digital goods by the buyer's country, where you are registered; invoices for taxed orders."
    >
      <fieldset className="field" aria-describedby={`${id}-behavior-hint`}>
        <legend className="mb-1">Tax on prices</legend>
        <div className="flex flex-col gap-2">
          {TAX_BEHAVIORS.map((value) => (
            <label key={value} className="check">
              <input type="radio" value={value} {...form.register(at('behavior'))} /> {BEHAVIOR_LABELS[value].label}
            </label>
          ))}
        </div>
        <span className="hint" id={`${id}-behavior-hint`}>
          {BEHAVIOR_LABELS[behavior]?.hint}
        </span>
      </fieldset>
      <SelectInput
        label="Origin country"
        width="md"
        hint="The country your business is established in."
        options={[{ value: '', label: 'Choose a country' }, ...COUNTRIES]}
        registration={form.register(at('originCountry'))}
        error={errors?.originCountry}
      />
      <Registrations form={form} at={at} error={registrationsError(errors?.registrations)} />
      <TextInput
        label="Seller name"
        width="md"
        hint="Your business's legal name, printed on invoices."
        autoComplete="organization"
        registration={form.register(at('sellerName'))}
        error={errors?.sellerName}
      />
      <TextArea
        label="Seller address"
        width="md"
        hint="Printed on invoices."
        registration={form.register(at('sellerAddress'))}
        error={errors?.sellerAddress}
      />
      <TextInput
        label="Seller tax ID"
        width="sm"
        hint="Your VAT or tax registration number, such as DE123456789."
        registration={form.register(at('sellerTaxId'))}
        error={errors?.sellerTaxId}
      />
    </Card>
  );
}

/**
 * Where the store is registered: the EU's one-stop shop as a box of its own (it stands for every
 * EU country), other countries added from a list and each removable by a button that names it.
 */
function Registrations<T extends WithTax, C, O extends FieldValues>({
  form,
  at,
  error,
}: {
  form: UseFormReturn<T, C, O>;
  at: (field: keyof TaxFormIn) => Path<T>;
  error: string | undefined;
}) {
  const id = useId();
  const [adding, setAdding] = useState('');
  const registrations = (form.watch(at('registrations')) as string[] | undefined) ?? [];
  const countries = registrations.filter((code) => code !== 'EU');
  const set = (next: string[]) =>
    form.setValue(at('registrations'), next as PathValue<T, Path<T>>, { shouldDirty: true, shouldValidate: false });
  const described = [error ? `${id}-error` : '', `${id}-hint`].filter(Boolean).join(' ');
  return (
    <fieldset className="field" aria-describedby={described}>
      <legend className="mb-1">Registered for tax in</legend>
      <label className="check">
        <input
          type="checkbox"
          checked={registrations.includes('EU')}
          aria-invalid={error ? true : undefined}
          onChange={(event) => set(event.target.checked ? ['EU', ...countries] : countries)}
        />{' '}
        EU one-stop shop (every EU country)
      </label>
      {countries.length > 0 && (
        <ul className="m-0 flex list-none flex-wrap gap-2 p-0" aria-label="Registered countries">
          {countries.map((code) => (
            <li
              key={code}
              className="inline-flex items-center gap-1 rounded-full border border-line-strong bg-surface py-0.5 pr-1 pl-3 text-sm"
            >
              {countryName(code)}
              <button
                type="button"
                className="inline-flex size-7 cursor-pointer items-center justify-center rounded-full border-0 bg-transparent text-muted hover:bg-raised hover:text-fg"
                aria-label={`Remove ${countryName(code)}`}
                onClick={() => set(registrations.filter((entry) => entry !== code))}
              >
                <span aria-hidden="true">×</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <div className="flex max-w-md flex-wrap items-center gap-2">
        <label htmlFor={`${id}-add`} className="visually-hidden">
          Country to add
        </label>
        <select
          id={`${id}-add`}
          className="min-w-52 flex-1"
          value={adding}
          aria-invalid={error ? true : undefined}
          onChange={(event) => setAdding(event.target.value)}
        >
          <option value="">Another country…</option>
          {COUNTRIES.filter((country) => !registrations.includes(country.value)).map((country) => (
            <option key={country.value} value={country.value}>
              {country.label}
            </option>
          ))}
        </select>
        <button
          type="button"
          className={buttonClass('secondary')}
          disabled={adding === ''}
          onClick={() => {
            set([...registrations, adding]);
            setAdding('');
          }}
        >
          Add country
        </button>
      </div>
      {error && (
        <span id={`${id}-error`} className="field-error">
          {error}
        </span>
      )}
      <span className="hint" id={`${id}-hint`}>
        Tax is charged only where you are registered; the one-stop shop covers sales to buyers in every EU country.
      </span>
    </fieldset>
  );
}
