/**
 * The product form, shared by `New product` and the product page's edit: the server's own schema
 * (ZProductBody: the create input's fields and rules without the path's storeId) validates it.
 */
import { zodResolver } from '@hookform/resolvers/zod';
import {
  CUSTOM_FIELD_TYPES,
  DELIVERY_METHODS,
  PLAN_INTERVALS,
  PRODUCT_STATUSES,
  TAX_CATEGORIES,
  ZProductBody,
} from '@svc/schemas';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useEffect, useId, useState } from 'react';
import { useFieldArray, useForm, type DefaultValues } from 'react-hook-form';
import type { z } from 'zod';
import { apiFailure, trpc } from '../../api';
import { useStore, useStoreId } from '../../store';
import { FormError } from '../../ui/form-error';
import { CheckboxGroup, SelectInput, TextArea, TextInput } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { Card, PageHeader } from '../../ui/layout';
import { buttonClass } from '../../ui/button';
import { StatusBadge } from '../../ui/badge';
import { formatMoney } from '../../ui/format';
import { planPeriod } from './ProductPlans';

export type ProductBody = z.input<typeof ZProductBody>;

export const DELIVERY_LABELS: Record<(typeof DELIVERY_METHODS)[number], string> = {
  licenseKeys: 'License keys',
  downloadFiles: 'Download files',
  manualDelivery: 'Manual delivery',
  deliveryInstructions: 'Delivery instructions',
};
export const STATUS_LABELS: Record<(typeof PRODUCT_STATUSES)[number], string> = {
  active: 'Active',
  draft: 'Draft',
  archived: 'Archived',
};
export const TAX_CATEGORY_LABELS: Record<(typeof TAX_CATEGORIES)[number], string> = {
  standard: 'Standard',
  ebook: 'E-book',
};
const FIELD_TYPE_LABELS: Record<(typeof CUSTOM_FIELD_TYPES)[number], string> = {
  text: 'Text',
  number: 'Number',
  email: 'Email',
  checkbox: 'Checkbox',
};

const INTERVAL_LABELS: Record<(typeof PLAN_INTERVALS)[number], string> = {
  day: 'Day',
  week: 'Week',
  month: 'Month',
  year: 'Year',
};

const NEW_PRODUCT: DefaultValues<ProductBody> = {
  name: '',
  description: '',
  status: 'active',
  deliveryMethods: [],
  deliveryInstructions: '',
  customFields: [],
  minQuantity: 1,
  maxQuantity: null,
  licenseActivationLimit: null,
  licenseValidityDays: null,
  plans: [],
  taxCategory: 'standard',
};

/** A number input's value: empty is `empty` (unset, or null for "no limit"). */
function numberOr<T extends undefined | null>(empty: T) {
  return (value: unknown): number | T => {
    if (typeof value === 'number') return value;
    if (value === '' || value === null || value === undefined) return empty;
    return Number(value);
  };
}

export function ProductForm({
  initial = NEW_PRODUCT,
  currency,
  submitLabel,
  pending,
  error,
  onSubmit,
}: {
  initial?: DefaultValues<ProductBody>;
  /** The store currency, for the archived plans' prices (a new product's form has none). */
  currency?: string;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit: (values: ProductBody) => void;
}) {
  const form = useForm<ProductBody>({ resolver: zodResolver(ZProductBody), defaultValues: initial });
  const errors = form.formState.errors;
  const customFields = useFieldArray({ control: form.control, name: 'customFields' });
  const plans = useFieldArray({ control: form.control, name: 'plans' });
  const planValues = form.watch('plans') ?? [];
  const activePlans = planValues.filter((plan) => plan.active !== false).length;
  const [recurring, setRecurring] = useState((initial.plans?.length ?? 0) > 0);
  const billingId = useId();
  const methods = form.watch('deliveryMethods');
  // A recurring product is priced by its first active plan: the form sends no price of its own.
  const submit = (values: ProductBody) =>
    onSubmit(
      recurring ? { ...values, price: undefined } : { ...values, plans: initial.plans?.length ? [] : undefined },
    );
  const chooseBilling = (next: boolean) => {
    setRecurring(next);
    if (!next) plans.replace([]);
    if (next && plans.fields.length === 0) {
      plans.append({
        interval: 'month',
        intervalCount: 1,
        price: form.getValues('price') ?? 0,
        trialDays: 0,
        active: true,
      });
    }
  };
  // The one conflict a product's save can meet is its slug, taken by another product of the store.
  useEffect(() => {
    if (error && apiFailure(error).status === 409)
      form.setError('slug', { type: 'server', message: 'Another product of this store has this slug.' });
  }, [error, form]);
  return (
    <form noValidate onSubmit={onValid(form, submit)}>
      <TextInput label="Name" width="md" registration={form.register('name')} error={errors.name} />
      <TextInput
        label="Slug"
        width="md"
        hint="The product's address on the storefront: lowercase letters and digits joined by hyphens. Empty: made from the name."
        registration={form.register('slug', {
          setValueAs: (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined),
        })}
        error={errors.slug}
      />
      <fieldset className="field">
        <legend>Billing</legend>
        <div role="radiogroup" aria-labelledby={`${billingId}-label`} className="toolbar">
          <span id={`${billingId}-label`} className="visually-hidden">
            How the product is billed
          </span>
          <label className="check">
            <input
              type="radio"
              name={`${billingId}-billing`}
              checked={!recurring}
              onChange={() => chooseBilling(false)}
            />{' '}
            One-time
          </label>
          <label className="check">
            <input
              type="radio"
              name={`${billingId}-billing`}
              checked={recurring}
              onChange={() => chooseBilling(true)}
            />{' '}
            Recurring
          </label>
        </div>
        {!recurring && (
          <TextInput
            label="Price"
            width="sm"
            type="number"
            inputMode="decimal"
            min={0}
            step="0.01"
            hint="In the store's currency, at most two decimals."
            registration={form.register('price', { setValueAs: numberOr(undefined) })}
            error={errors.price}
          />
        )}
        {recurring && (
          <>
            <span className="hint">
              The first active plan prices the product. A saved plan's period is fixed; an archived plan is no longer
              sold, and what was sold on it stays.
            </span>
            {plans.fields.map((field, index) => {
              const plan = planValues[index];
              const saved = Boolean(plan?.id);
              if (plan?.active === false) {
                return (
                  <div key={field.id} className="toolbar items-center rounded-md border border-line p-3">
                    <p className="m-0 min-w-0 break-words">
                      <span className="font-medium">Plan {index + 1}</span>{' '}
                      <StatusBadge kind="product" status="archived" />{' '}
                      {planPeriod({ interval: plan.interval ?? 'month', intervalCount: plan.intervalCount ?? 1 })},{' '}
                      {currency ? formatMoney(plan.price ?? 0, currency) : plan.price}
                      {plan.trialDays ? `, ${plan.trialDays}-day trial` : ''}
                    </p>
                    <button
                      type="button"
                      className={buttonClass('secondary')}
                      disabled={activePlans >= 6}
                      onClick={() => form.setValue(`plans.${index}.active`, true, { shouldDirty: true })}
                    >
                      Restore plan {index + 1}
                    </button>
                  </div>
                );
              }
              return (
                <div key={field.id} className="toolbar rounded-md border border-line p-3">
                  <TextInput
                    label={`Plan ${index + 1} every`}
                    width="sm"
                    type="number"
                    min={1}
                    max={12}
                    readOnly={saved}
                    registration={form.register(`plans.${index}.intervalCount`, { setValueAs: numberOr(undefined) })}
                    error={errors.plans?.[index]?.intervalCount}
                  />
                  <SelectInput
                    label={`Plan ${index + 1} interval`}
                    width="sm"
                    options={PLAN_INTERVALS.map((value) => ({ value, label: INTERVAL_LABELS[value] }))}
                    registration={form.register(`plans.${index}.interval`)}
                    error={errors.plans?.[index]?.interval}
                  />
                  <TextInput
                    label={`Plan ${index + 1} price`}
                    width="sm"
                    type="number"
                    inputMode="decimal"
                    min={0}
                    step="0.01"
                    registration={form.register(`plans.${index}.price`, { setValueAs: numberOr(undefined) })}
                    error={errors.plans?.[index]?.price}
                  />
                  <TextInput
                    label={`Plan ${index + 1} trial days`}
                    width="sm"
                    type="number"
                    min={0}
                    max={365}
                    registration={form.register(`plans.${index}.trialDays`, { setValueAs: numberOr(undefined) })}
                    error={errors.plans?.[index]?.trialDays}
                  />
                  <button
                    type="button"
                    className={buttonClass('secondary')}
                    onClick={() =>
                      saved ? form.setValue(`plans.${index}.active`, false, { shouldDirty: true }) : plans.remove(index)
                    }
                  >
                    {saved ? 'Archive' : 'Remove'} plan {index + 1}
                  </button>
                </div>
              );
            })}
            {errors.plans?.message && <span className="field-error">{errors.plans.message}</span>}
            <div>
              <button
                type="button"
                className={buttonClass('secondary')}
                disabled={activePlans >= 6}
                onClick={() =>
                  plans.append({ interval: 'month', intervalCount: 1, price: 0, trialDays: 0, active: true })
                }
              >
                Add plan
              </button>
            </div>
          </>
        )}
      </fieldset>
      <TextArea label="Description" registration={form.register('description')} error={errors.description} />
      <SelectInput
        label="Status"
        width="sm"
        hint="Only active products are sold."
        options={PRODUCT_STATUSES.map((value) => ({ value, label: STATUS_LABELS[value] }))}
        registration={form.register('status')}
        error={errors.status}
      />
      <SelectInput
        label="Tax category"
        width="sm"
        hint="Where the store charges tax: an e-book takes a country's reduced rate for e-books, where it has one."
        options={TAX_CATEGORIES.map((value) => ({ value, label: TAX_CATEGORY_LABELS[value] }))}
        registration={form.register('taxCategory')}
        error={errors.taxCategory}
      />
      <CheckboxGroup
        legend="Delivery"
        options={DELIVERY_METHODS.map((value) => ({ value, label: DELIVERY_LABELS[value] }))}
        registration={form.register('deliveryMethods')}
        error={errors.deliveryMethods as never}
      />
      {methods?.includes('deliveryInstructions') && (
        <TextArea
          label="Delivery instructions"
          hint="Shown to the buyer after payment."
          registration={form.register('deliveryInstructions')}
          error={errors.deliveryInstructions}
        />
      )}
      {methods?.includes('licenseKeys') && (
        <>
          <TextInput
            label="Activation limit"
            width="sm"
            type="number"
            min={1}
            hint="Instances one license may activate at once; empty for no limit."
            registration={form.register('licenseActivationLimit', { setValueAs: numberOr(null) })}
            error={errors.licenseActivationLimit}
          />
          <TextInput
            label="Validity (days)"
            width="sm"
            type="number"
            min={1}
            hint="Days a license stays valid from its sale; empty for no expiry."
            registration={form.register('licenseValidityDays', { setValueAs: numberOr(null) })}
            error={errors.licenseValidityDays}
          />
        </>
      )}
      <TextInput
        label="Minimum quantity"
        width="sm"
        type="number"
        min={1}
        registration={form.register('minQuantity', { setValueAs: numberOr(undefined) })}
        error={errors.minQuantity}
      />
      <TextInput
        label="Maximum quantity"
        width="sm"
        type="number"
        min={1}
        hint="Empty for no maximum."
        registration={form.register('maxQuantity', { setValueAs: numberOr(null) })}
        error={errors.maxQuantity}
      />
      <fieldset className="field">
        <legend>Custom fields</legend>
        <span className="hint">What the buyer fills in at checkout.</span>
        {customFields.fields.map((field, index) => (
          <div key={field.id} className="toolbar">
            <TextInput
              label={`Field ${index + 1} name`}
              width="md"
              registration={form.register(`customFields.${index}.name`)}
              error={errors.customFields?.[index]?.name}
            />
            <SelectInput
              label={`Field ${index + 1} type`}
              width="sm"
              options={CUSTOM_FIELD_TYPES.map((value) => ({ value, label: FIELD_TYPE_LABELS[value] }))}
              registration={form.register(`customFields.${index}.type`)}
            />
            <label className="check">
              <input type="checkbox" {...form.register(`customFields.${index}.required`)} /> Required
            </label>
            <button type="button" className={buttonClass('secondary')} onClick={() => customFields.remove(index)}>
              Remove field {index + 1}
            </button>
          </div>
        ))}
        {errors.customFields?.message && <span className="field-error">{errors.customFields.message}</span>}
        <div>
          <button
            type="button"
            className={buttonClass('secondary')}
            onClick={() => customFields.append({ name: '', type: 'text', required: false })}
          >
            Add custom field
          </button>
        </div>
      </fieldset>
      <FormError form={form} error={error} />
      <div className="mt-2 flex justify-end border-t border-line pt-4">
        <button type="submit" className={buttonClass('primary')} disabled={pending}>
          {submitLabel}
        </button>
      </div>
    </form>
  );
}

export function NewProduct() {
  const storeId = useStoreId();
  const { can } = useStore();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const create = useMutation(
    trpc.catalog.create.mutationOptions({
      onSuccess: async (product) => {
        await queryClient.invalidateQueries(trpc.catalog.dashboardList.pathFilter());
        await navigate({
          to: '/stores/$storeId/products/$productId',
          params: { storeId, productId: product.id },
        });
      },
    }),
  );
  return (
    <>
      <PageHeader
        back={
          <Link to="/stores/$storeId/products" params={{ storeId }}>
            ← Back to products
          </Link>
        }
        title="New product"
        description="Name it, price it and choose how it is delivered; images, files and keys come next."
      />
      {can('manageProducts') ? (
        <Card id="new-product-details" title="Details" className="max-w-3xl">
          <ProductForm
            submitLabel="Create product"
            pending={create.isPending}
            error={create.error}
            onSubmit={(values) => create.mutate({ ...values, storeId })}
          />
        </Card>
      ) : (
        <p>Your role in this store does not include managing products.</p>
      )}
    </>
  );
}
