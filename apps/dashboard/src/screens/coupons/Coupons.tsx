/**
 * Coupons: the store's discount codes (code, discount, uses, expiry, status), created and edited in
 * a dialog validated by the server's own schemas, deleted after a `Delete` confirmation. Every
 * coupon procedure needs manageProducts, so without it the screen says so and asks nothing.
 */
import { zodResolver } from '@hookform/resolvers/zod';
import { COUPON_DURATIONS, DISCOUNT_TYPES, ZCreateCouponInput, ZDiscountType, ZUpdateCouponInput } from '@svc/schemas';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useForm, type FieldValues, type Resolver } from 'react-hook-form';
import { z } from 'zod';
import { trpc, type RouterOutputs } from '../../api';
import { useStore, useStoreId } from '../../store';
import { ConfirmAction, FormDialog } from '../../ui/dialogs';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { SelectInput, TextInput } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { formatDateTime, formatMoney } from '../../ui/format';
import { DataTable } from '../../ui/table';
import { buttonClass } from '../../ui/button';
import { EmptyState, PageHeader } from '../../ui/layout';

type Coupon = RouterOutputs['coupons']['list']['coupons'][number];

/** What the form's inputs hold: text as typed; the schemas below turn it into the API's input. */
const ZCouponFields = z.object({
  code: z.string(),
  discountType: ZDiscountType,
  discountValue: z.string(),
  maxUses: z.string(),
  minAmount: z.string(),
  expiresAt: z.string(),
  active: z.boolean(),
  duration: z.enum(COUPON_DURATIONS),
});
type CouponFields = z.infer<typeof ZCouponFields>;

/** A typed number, or the text itself when it is not one (so the API schema names the field's error). */
function numberOrText(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : trimmed;
}

/** `<input type="datetime-local">` is local time without a zone; the API takes an ISO instant. */
function instant(local: string): string | undefined {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

function localInput(iso: string | null): string {
  if (!iso) return '';
  const date = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/*
 * The text fields become the API's input, which the server's own schema then checks (its
 * refinement included). A field that is not a number goes on as typed (hence the casts), so that
 * schema names it.
 */
type CreateInput = z.input<typeof ZCreateCouponInput>;
type UpdateInput = z.input<typeof ZUpdateCouponInput>;

/** Create: every field as ZCreateCouponInput wants it. */
function createSchema(storeId: string) {
  return ZCouponFields.transform((fields): CreateInput => ({
    storeId,
    code: fields.code.trim(),
    discountType: fields.discountType,
    discountValue: numberOrText(fields.discountValue) as number,
    maxUses: numberOrText(fields.maxUses) as number | undefined,
    minAmount: numberOrText(fields.minAmount) as number | undefined,
    expiresAt: instant(fields.expiresAt),
    active: fields.active,
    duration: fields.duration,
  })).pipe(ZCreateCouponInput);
}

/** Edit: every field sent, an emptied limit, minimum or expiry as null (ZUpdateCouponInput clears it). */
function updateSchema(storeId: string, couponId: string) {
  return ZCouponFields.transform((fields): UpdateInput => ({
    storeId,
    couponId,
    code: fields.code.trim(),
    discountType: fields.discountType,
    discountValue: numberOrText(fields.discountValue) as number,
    maxUses: (numberOrText(fields.maxUses) ?? null) as number | null,
    minAmount: (numberOrText(fields.minAmount) ?? null) as number | null,
    expiresAt: instant(fields.expiresAt) ?? null,
    active: fields.active,
    duration: fields.duration,
  })).pipe(ZUpdateCouponInput);
}

const TYPE_OPTIONS = DISCOUNT_TYPES.map((type) => ({
  value: type,
  label: type === 'percent' ? 'Percent off' : 'Fixed amount off',
}));

const DURATION_OPTIONS = COUPON_DURATIONS.map((duration) => ({
  value: duration,
  label: duration === 'once' ? 'First payment only' : 'Every payment',
}));

function couponStatus(coupon: Coupon, now: number): string {
  if (!coupon.active) return 'Inactive';
  if (coupon.expiresAt && Date.parse(coupon.expiresAt) <= now) return 'Expired';
  if (coupon.maxUses !== null && coupon.uses >= coupon.maxUses) return 'Used up';
  return 'Active';
}

function CouponForm<Output extends FieldValues>({
  resolver,
  defaults,
  submitLabel,
  currency,
  pending,
  error,
  onSubmit,
  onCancel,
}: {
  resolver: Resolver<CouponFields, unknown, Output>;
  defaults: CouponFields;
  submitLabel: string;
  currency: string;
  pending: boolean;
  error: unknown;
  onSubmit: (values: Output) => void;
  onCancel: () => void;
}) {
  const form = useForm<CouponFields, unknown, Output>({ resolver, defaultValues: defaults });
  const errors = form.formState.errors;
  return (
    <form noValidate onSubmit={onValid(form, onSubmit)}>
      <TextInput
        label="Code"
        hint="Letters, digits, - and _; buyers may type it in any case."
        autoComplete="off"
        registration={form.register('code')}
        error={errors.code}
      />
      <SelectInput
        label="Discount type"
        options={TYPE_OPTIONS}
        registration={form.register('discountType')}
        error={errors.discountType}
      />
      <TextInput
        label="Discount"
        hint={`Percent: a whole number from 1 to 100. Fixed: an amount in ${currency}.`}
        inputMode="decimal"
        registration={form.register('discountValue')}
        error={errors.discountValue}
      />
      <TextInput
        label="Maximum uses"
        hint="Empty for no limit."
        inputMode="numeric"
        registration={form.register('maxUses')}
        error={errors.maxUses}
      />
      <TextInput
        label="Minimum order amount"
        hint={`In ${currency}; empty for none.`}
        inputMode="decimal"
        registration={form.register('minAmount')}
        error={errors.minAmount}
      />
      <TextInput
        label="Expires"
        hint="Your local time; empty for never."
        type="datetime-local"
        registration={form.register('expiresAt')}
        error={errors.expiresAt}
      />
      <SelectInput
        label="On a subscription"
        hint="One-time purchases have one payment either way."
        options={DURATION_OPTIONS}
        registration={form.register('duration')}
        error={errors.duration}
      />
      <div className="field">
        <label className="check">
          <input type="checkbox" {...form.register('active')} /> Active
        </label>
      </div>
      <ErrorNote error={error} />
      <div className="actions">
        <button type="submit" className={buttonClass('primary')} disabled={pending}>
          {submitLabel}
        </button>
        <button type="button" className={buttonClass('secondary')} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

const EMPTY: CouponFields = {
  code: '',
  discountType: 'percent',
  discountValue: '',
  maxUses: '',
  minAmount: '',
  expiresAt: '',
  active: true,
  duration: 'once',
};

function fieldsOf(coupon: Coupon): CouponFields {
  return {
    code: coupon.code,
    discountType: coupon.discountType,
    discountValue: String(coupon.discountValue),
    maxUses: coupon.maxUses === null ? '' : String(coupon.maxUses),
    minAmount: coupon.minAmount === null ? '' : String(coupon.minAmount),
    expiresAt: localInput(coupon.expiresAt),
    active: coupon.active,
    duration: coupon.duration,
  };
}

function useRefreshCoupons() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: trpc.coupons.list.queryKey() });
}

function NewCoupon({ currency }: { currency: string }) {
  const storeId = useStoreId();
  const refresh = useRefreshCoupons();
  const create = useMutation(trpc.coupons.create.mutationOptions({ onSuccess: refresh }));
  return (
    <FormDialog trigger="New coupon" title="New coupon" triggerClass={buttonClass('primary')}>
      {(close) => (
        <CouponForm<z.output<typeof ZCreateCouponInput>>
          resolver={zodResolver(createSchema(storeId))}
          defaults={EMPTY}
          submitLabel="Create coupon"
          currency={currency}
          pending={create.isPending}
          error={create.error}
          onSubmit={(input) => create.mutate(input, { onSuccess: close })}
          onCancel={close}
        />
      )}
    </FormDialog>
  );
}

function EditCoupon({ coupon, currency }: { coupon: Coupon; currency: string }) {
  const storeId = useStoreId();
  const refresh = useRefreshCoupons();
  const update = useMutation(trpc.coupons.update.mutationOptions({ onSuccess: refresh }));
  return (
    <FormDialog trigger="Edit" triggerLabel={`Edit ${coupon.code}`} title={`Edit coupon ${coupon.code}`}>
      {(close) => (
        <CouponForm<z.output<typeof ZUpdateCouponInput>>
          resolver={zodResolver(updateSchema(storeId, coupon.id))}
          defaults={fieldsOf(coupon)}
          submitLabel="Save coupon"
          currency={currency}
          pending={update.isPending}
          error={update.error}
          onSubmit={(input) => update.mutate(input, { onSuccess: close })}
          onCancel={close}
        />
      )}
    </FormDialog>
  );
}

function DeleteCoupon({ coupon }: { coupon: Coupon }) {
  const storeId = useStoreId();
  const refresh = useRefreshCoupons();
  const remove = useMutation(trpc.coupons.delete.mutationOptions({ onSuccess: refresh }));
  return (
    <ConfirmAction
      verb="Delete"
      triggerLabel={`Delete ${coupon.code}`}
      title={`Delete coupon ${coupon.code}?`}
      pending={remove.isPending}
      error={remove.error}
      onConfirm={() => remove.mutateAsync({ storeId, couponId: coupon.id })}
    >
      <p>Buyers can no longer use this code. Orders that used it keep their discount.</p>
    </ConfirmAction>
  );
}

export function Coupons() {
  const storeId = useStoreId();
  const { store, can } = useStore();
  const allowed = can('manageProducts');
  const coupons = useQuery(trpc.coupons.list.queryOptions({ storeId }, { enabled: allowed }));
  const currency = store?.currency ?? 'USD';
  if (store && !allowed) {
    return (
      <>
        <PageHeader title="Coupons" description="Discount codes buyers enter at checkout." />
        <p>Coupons need the manageProducts permission, which you do not have in this store.</p>
      </>
    );
  }
  const now = Date.now();
  return (
    <>
      <PageHeader
        title="Coupons"
        description="Discount codes buyers enter at checkout."
        actions={<NewCoupon currency={currency} />}
      />
      <Loaded query={coupons} label="Loading coupons…">
        {(data) => (
          <DataTable<Coupon>
            caption="Coupons"
            rows={data.coupons}
            rowKey={(coupon) => coupon.id}
            empty={
              <EmptyState title="No coupons yet.">
                Use New coupon to make a code that takes a percentage or an amount off, for every product or a few.
              </EmptyState>
            }
            columns={[
              { header: 'Code', cell: (coupon) => <code>{coupon.code}</code> },
              {
                header: 'Discount',
                numeric: true,
                cell: (coupon) =>
                  coupon.discountType === 'percent'
                    ? `${coupon.discountValue}%`
                    : formatMoney(coupon.discountValue, currency),
              },
              {
                header: 'Uses',
                numeric: true,
                cell: (coupon) => (coupon.maxUses === null ? coupon.uses : `${coupon.uses} of ${coupon.maxUses}`),
              },
              { header: 'Expires', cell: (coupon) => (coupon.expiresAt ? formatDateTime(coupon.expiresAt) : 'Never') },
              { header: 'Status', cell: (coupon) => couponStatus(coupon, now) },
              {
                header: 'Actions',
                cell: (coupon) => (
                  <div className="row-actions">
                    <EditCoupon coupon={coupon} currency={currency} />
                    <DeleteCoupon coupon={coupon} />
                  </div>
                ),
              },
            ]}
          />
        )}
      </Loaded>
    </>
  );
}
