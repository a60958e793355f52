/**
 * One subscription: its terms (plan, seats, amount, next charge, trial end, the saved payment
 * method's gateway), the licenses that follow it with their instances (masked, as the Licenses
 * screens show them), its orders as a timeline, and what a member with editOrders may do to it:
 * cancel (at the period end or now), resume, pause, change the plan or the seats (the amount
 * charged now is the server's preview, never computed here) and, on a test subscription, advance
 * its clock. A member without editOrders sees no action.
 */
import { zodResolver } from '@hookform/resolvers/zod';
import { ZCancelSubscriptionInput, ZUpdateSubscriptionInput } from '@svc/schemas';
import { useMutation, useQueries, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { z } from 'zod';
import { trpc, type RouterOutputs } from '../../api';
import { useStore, useStoreId } from '../../store';
import { StatusBadge, statusLabel } from '../../ui/badge';
import { buttonClass } from '../../ui/button';
import { ConfirmAction, FormDialog } from '../../ui/dialogs';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { SelectInput, TextInput } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { formatDate, formatDateTime, formatMoney } from '../../ui/format';
import { Card, PageHeader, Stack } from '../../ui/layout';
import { DataTable } from '../../ui/table';
import { cadenceLabel, chargeLine } from './words';

const subscriptionRoute = getRouteApi('/app/stores/$storeId/subscriptions/$subscriptionId');

type Subscription = RouterOutputs['subscriptions']['get'];
type Advanced = RouterOutputs['subscriptions']['advance'];
type License = RouterOutputs['licenses']['list']['licenses'][number];

const REASON_WORDS: Record<string, string> = {
  purchase: 'Purchase',
  subscription_create: 'First payment',
  subscription_cycle: 'Renewal',
  subscription_update: 'Plan change',
};

/** After an action: the subscription's new state in the cache, and what shows it refetched. */
function useSubscriptionChanged() {
  const queryClient = useQueryClient();
  return async (subscription: Subscription) => {
    queryClient.setQueryData(
      trpc.subscriptions.get.queryKey({ storeId: subscription.storeId, subscriptionId: subscription.id }),
      subscription,
    );
    await Promise.all([
      queryClient.invalidateQueries(trpc.subscriptions.list.pathFilter()),
      queryClient.invalidateQueries(trpc.subscriptions.previewUpdate.pathFilter()),
      queryClient.invalidateQueries(trpc.orders.dashboardList.pathFilter()),
      queryClient.invalidateQueries(trpc.licenses.list.pathFilter()),
    ]);
  };
}

export function SubscriptionPage() {
  const storeId = useStoreId();
  const { subscriptionId } = subscriptionRoute.useParams();
  const subscription = useQuery(trpc.subscriptions.get.queryOptions({ storeId, subscriptionId }));
  return (
    <Loaded query={subscription} label="Loading the subscription…" lines={8}>
      {(data) => <SubscriptionView subscription={data} />}
    </Loaded>
  );
}

function SubscriptionView({ subscription: sub }: { subscription: Subscription }) {
  const { can } = useStore();
  const mayEdit = can('editOrders');
  const money = (amount: number) => formatMoney(amount, sub.currency);
  return (
    <>
      <PageHeader
        back={
          <Link to="/stores/$storeId/subscriptions" params={{ storeId: sub.storeId }} search={{}}>
            ← All subscriptions
          </Link>
        }
        title={sub.productName}
        badge={<StatusBadge kind="subscription" status={sub.status} />}
        description={
          <span className="break-words">
            {sub.customerEmail} · since {formatDate(sub.createdAt)}
            {sub.livemode ? '' : ' · test subscription'}
          </span>
        }
        actions={mayEdit ? <SubscriptionActions subscription={sub} /> : undefined}
      />
      <div className="grid min-w-0 gap-6 lg:grid-cols-[minmax(0,1fr)_20rem]">
        <Stack>
          <Card id="summary" title="Summary">
            <dl className="facts">
              <dt>Status</dt>
              <dd>
                {statusLabel(sub.status)}
                {sub.cancelAtPeriodEnd ? ` (ends on ${formatDate(sub.currentPeriodEnd)})` : ''}
                {sub.pauseAtPeriodEnd ? ` (pauses on ${formatDate(sub.currentPeriodEnd)})` : ''}
              </dd>
              <dt>Plan</dt>
              <dd>{cadenceLabel(sub)}</dd>
              <dt>Seats</dt>
              <dd>{sub.quantity}</dd>
              <dt>Amount</dt>
              <dd>
                {money(sub.amount)} / {cadenceLabel(sub, true)}
              </dd>
              <dt>Next charge</dt>
              <dd>{chargeLine(sub, formatDate)}</dd>
              <dt>Current period</dt>
              <dd>
                {formatDate(sub.currentPeriodStart)} – {formatDate(sub.currentPeriodEnd)}
              </dd>
              <dt>Trial end</dt>
              <dd>{sub.trialEnd ? formatDate(sub.trialEnd) : 'No trial'}</dd>
              {sub.creditBalance > 0 && (
                <>
                  <dt>Credit balance</dt>
                  <dd>{money(sub.creditBalance)}</dd>
                </>
              )}
              {sub.pendingUpdate && (
                <>
                  <dt>At the next renewal</dt>
                  <dd>
                    {sub.pendingUpdate.quantity} seat{sub.pendingUpdate.quantity === 1 ? '' : 's'},{' '}
                    {money(sub.pendingUpdate.amount)}
                  </dd>
                </>
              )}
              {sub.cancellationReason && (
                <>
                  <dt>Cancellation</dt>
                  <dd>{statusLabel(sub.cancellationReason)}</dd>
                </>
              )}
              {!sub.livemode && sub.clockTime && (
                <>
                  <dt>Test clock</dt>
                  <dd>{formatDateTime(sub.clockTime)}</dd>
                </>
              )}
            </dl>
          </Card>
          <OrdersTimeline subscription={sub} />
          {!sub.livemode && mayEdit && <AdvanceClock subscription={sub} />}
        </Stack>
        <Stack>
          <Card id="payment" title="Payment method">
            <dl className="facts">
              <dt>Gateway</dt>
              <dd>{sub.paymentMethod ? statusLabel(sub.paymentMethod) : 'None saved'}</dd>
              <dt>Currency</dt>
              <dd>{sub.currency}</dd>
            </dl>
          </Card>
          <Licenses subscription={sub} />
        </Stack>
      </div>
    </>
  );
}

/**
 * The subscription's orders, newest first (orders.dashboardList by subscriptionId), older pages on
 * demand: each page a query of its own under its cursor, shown as one list.
 */
function OrdersTimeline({ subscription: sub }: { subscription: Subscription }) {
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const pages = useQueries({
    queries: cursors.map((cursor) =>
      trpc.orders.dashboardList.queryOptions({
        storeId: sub.storeId,
        subscriptionId: sub.id,
        limit: 20,
        ...(cursor ? { cursor } : {}),
      }),
    ),
  });
  const first = pages[0]!;
  const last = pages[pages.length - 1]!;
  const nextCursor = last.data?.nextCursor;
  const orders = {
    data: first.data ? pages.flatMap((page) => page.data?.orders ?? []) : undefined,
    error: first.error,
    isPending: first.isPending,
    refetch: first.refetch,
  };
  return (
    <Card id="orders" title="Orders" description="Every payment of this subscription, newest first.">
      <Loaded query={orders} label="Loading the orders…" lines={3}>
        {(list) =>
          list.length === 0 ? (
            <p className="m-0 text-sm text-muted">No orders yet.</p>
          ) : (
            <>
              <ol className="timeline" aria-label="Orders of this subscription">
                {list.map((order) => (
                  <li key={order.id}>
                    <span className="flex flex-wrap items-center gap-2">
                      <Link
                        to="/stores/$storeId/orders/$orderId"
                        params={{ storeId: sub.storeId, orderId: order.orderId }}
                      >
                        {order.orderId}
                      </Link>
                      <span className="font-medium">{REASON_WORDS[order.billingReason] ?? order.billingReason}</span>
                      <StatusBadge kind="order" status={order.status} />
                      <span className="tabular-nums">{formatMoney(order.price, sub.currency)}</span>
                    </span>
                    <time dateTime={order.createdAt} className="block text-sm text-muted">
                      {formatDateTime(order.createdAt)}
                    </time>
                  </li>
                ))}
              </ol>
              <ErrorNote error={last.error} />
              {nextCursor && (
                <button
                  type="button"
                  className={buttonClass('secondary', 'mt-3')}
                  disabled={last.isFetching}
                  onClick={() => setCursors((known) => [...known, nextCursor])}
                >
                  Show older orders
                </button>
              )}
            </>
          )
        }
      </Loaded>
    </Card>
  );
}

/** The licenses that follow the subscription (licenses.list by subscriptionId): masked, with their instances. */
function Licenses({ subscription: sub }: { subscription: Subscription }) {
  const licenses = useQuery(trpc.licenses.list.queryOptions({ storeId: sub.storeId, subscriptionId: sub.id }));
  return (
    <Card id="licenses" title="Licenses">
      <Loaded query={licenses} label="Loading the licenses…" lines={2}>
        {(page) =>
          page.licenses.length === 0 ? (
            <p className="m-0 text-sm text-muted">No license follows this subscription.</p>
          ) : (
            <Stack className="gap-4">
              {page.licenses.map((license) => (
                <LicenseFacts key={license.id} license={license} storeId={sub.storeId} />
              ))}
            </Stack>
          )
        }
      </Loaded>
    </Card>
  );
}

function LicenseFacts({ license, storeId }: { license: License; storeId: string }) {
  return (
    <div className="min-w-0">
      <p className="m-0 flex flex-wrap items-center gap-2">
        <Link to="/stores/$storeId/licenses/$licenseId" params={{ storeId, licenseId: license.id }}>
          <code>{license.masked}</code>
        </Link>
        <StatusBadge kind="license" status={license.status} />
      </p>
      <p className="m-0 mt-1 text-sm text-muted">
        {license.activationLimit === null
          ? `${license.activationUsage} instances (no limit)`
          : `${license.activationUsage} of ${license.activationLimit} instances`}
        {license.expiresAt ? ` · access until ${formatDate(license.expiresAt)}` : ''}
      </p>
      {license.instances.length > 0 && (
        <ul aria-label={`Instances of ${license.masked}`} className="m-0 mt-1 pl-5 text-sm">
          {license.instances.map((instance) => (
            <li key={instance.id} className="break-words">
              {instance.name} <span className="text-muted">({formatDate(instance.createdAt)})</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The header's actions, each offered when the subscription's status allows it. */
function SubscriptionActions({ subscription: sub }: { subscription: Subscription }) {
  const done = useSubscriptionChanged();
  const ref = { storeId: sub.storeId, subscriptionId: sub.id };
  const resume = useMutation(trpc.subscriptions.resume.mutationOptions({ onSuccess: done }));
  const pause = useMutation(trpc.subscriptions.pause.mutationOptions({ onSuccess: done }));
  const running = sub.status === 'trialing' || sub.status === 'active';
  const cancellable = ['trialing', 'active', 'past_due', 'paused'].includes(sub.status) && !sub.cancelAtPeriodEnd;
  const scheduled = sub.cancelAtPeriodEnd || sub.pauseAtPeriodEnd;
  const resumable = sub.status === 'paused' || (running && scheduled);
  return (
    <>
      {running && !sub.cancelAtPeriodEnd && <ChangePlan subscription={sub} />}
      {resumable && (
        <ConfirmAction
          verb="Resume subscription"
          destructive={false}
          triggerVariant="primary"
          title="Resume this subscription?"
          pending={resume.isPending}
          error={resume.error}
          onConfirm={() => resume.mutateAsync(ref)}
        >
          {sub.status === 'paused' ? (
            <p>
              The saved payment method is charged {formatMoney(sub.amount, sub.currency)} now and a new period starts.
            </p>
          ) : (
            <p>
              The scheduled {sub.cancelAtPeriodEnd ? 'cancel' : 'pause'} is undone: it renews on{' '}
              {formatDate(sub.currentPeriodEnd)} as before.
            </p>
          )}
        </ConfirmAction>
      )}
      {running && !scheduled && (
        <ConfirmAction
          verb="Pause subscription"
          title="Pause this subscription?"
          pending={pause.isPending}
          error={pause.error}
          onConfirm={() => pause.mutateAsync(ref)}
        >
          <p>
            It pauses when the current period ends on {formatDate(sub.currentPeriodEnd)}: no charges, and its licenses
            stop validating, until you resume it.
          </p>
        </ConfirmAction>
      )}
      {cancellable && <CancelSubscription subscription={sub} />}
      {/* Read from the stored schedule (pauseAtPeriodEnd), so it is said after a reload too. */}
      <span role="status" className={sub.pauseAtPeriodEnd ? 'basis-full text-sm text-muted' : 'visually-hidden'}>
        {sub.pauseAtPeriodEnd ? `Pauses on ${formatDate(sub.currentPeriodEnd)}; resume it to keep it running.` : ''}
      </span>
    </>
  );
}

const ZCancelForm = z.object({
  when: z.enum(['period_end', 'now']),
  reason: z.union([ZCancelSubscriptionInput.shape.reason.unwrap(), z.literal('')]),
});
type CancelForm = z.input<typeof ZCancelForm>;

/** Cancel, in a dialog: at the period end (the default) or now, with an optional reason. */
function CancelSubscription({ subscription: sub }: { subscription: Subscription }) {
  const done = useSubscriptionChanged();
  const cancel = useMutation(trpc.subscriptions.cancel.mutationOptions({ onSuccess: done }));
  const form = useForm<CancelForm>({
    resolver: zodResolver(ZCancelForm),
    defaultValues: { when: 'period_end', reason: '' },
  });
  return (
    <FormDialog trigger="Cancel subscription" title="Cancel this subscription?" triggerClass={buttonClass('danger')}>
      {(close) => (
        <form
          noValidate
          onSubmit={onValid(form, (values) =>
            cancel.mutate(
              {
                storeId: sub.storeId,
                subscriptionId: sub.id,
                atPeriodEnd: values.when === 'period_end',
                ...(values.reason ? { reason: values.reason } : {}),
              },
              { onSuccess: close },
            ),
          )}
        >
          <fieldset className="field">
            <legend className="mb-1">When</legend>
            <label className="check">
              <input type="radio" value="period_end" {...form.register('when')} /> At period end (
              {formatDate(sub.currentPeriodEnd)}): it runs until then and does not renew
            </label>
            <label className="check">
              <input type="radio" value="now" {...form.register('when')} /> Now: it ends at once and its licenses expire
            </label>
          </fieldset>
          <SelectInput
            label="Reason (optional)"
            options={[
              { value: '', label: 'Not given' },
              { value: 'requested_by_customer', label: 'The customer asked' },
              { value: 'requested_by_merchant', label: 'My decision' },
            ]}
            registration={form.register('reason')}
            error={form.formState.errors.reason}
          />
          <p className="m-0 text-sm text-muted">No money moves: refund an order yourself if you choose to.</p>
          <ErrorNote error={cancel.error} />
          <div className="actions">
            <button type="button" className={buttonClass('secondary')} onClick={close}>
              Keep subscription
            </button>
            <button type="submit" className={buttonClass('danger')} disabled={cancel.isPending}>
              Cancel subscription
            </button>
          </div>
        </form>
      )}
    </FormDialog>
  );
}

const ZChangeForm = z.object({
  planId: ZUpdateSubscriptionInput.shape.planId.unwrap(),
  quantity: ZUpdateSubscriptionInput.shape.quantity.unwrap(),
});
type ChangeForm = z.input<typeof ZChangeForm>;

/** Change plan: a plan of the same product and the seats; what it charges now is the server's preview. */
function ChangePlan({ subscription: sub }: { subscription: Subscription }) {
  return (
    <FormDialog trigger="Change plan" title="Change plan" triggerClass={buttonClass('secondary')}>
      {(close) => <ChangePlanForm subscription={sub} close={close} />}
    </FormDialog>
  );
}

function ChangePlanForm({ subscription: sub, close }: { subscription: Subscription; close: () => void }) {
  const done = useSubscriptionChanged();
  const product = useQuery({
    ...trpc.catalog.get.queryOptions({ storeId: sub.storeId, productId: sub.productId ?? '' }),
    enabled: !!sub.productId,
  });
  const form = useForm<ChangeForm>({
    resolver: zodResolver(ZChangeForm),
    defaultValues: { planId: sub.planId, quantity: sub.quantity },
    mode: 'onChange',
  });
  const planId = form.watch('planId');
  const quantity = form.watch('quantity');
  const changed = planId !== sub.planId || quantity !== sub.quantity;
  const valid = Number.isInteger(quantity) && quantity >= 1 && quantity <= 100;
  const preview = useQuery({
    ...trpc.subscriptions.previewUpdate.queryOptions({
      storeId: sub.storeId,
      subscriptionId: sub.id,
      planId,
      quantity,
    }),
    enabled: changed && valid,
    retry: false,
  });
  const update = useMutation(trpc.subscriptions.update.mutationOptions({ onSuccess: done }));
  const plans = (product.data?.plans ?? []).filter((plan) => plan.active || plan.id === sub.planId);
  const money = (amount: number) => formatMoney(amount, sub.currency);
  return (
    <form
      noValidate
      onSubmit={onValid(form, (values) =>
        update.mutate(
          { storeId: sub.storeId, subscriptionId: sub.id, planId: values.planId, quantity: values.quantity },
          { onSuccess: close },
        ),
      )}
    >
      <SelectInput
        label="Plan"
        options={
          plans.length
            ? plans.map((plan) => ({
                value: plan.id,
                label: `${cadenceLabel(plan)}: ${money(plan.price)} / ${cadenceLabel(plan, true)}${plan.id === sub.planId ? ' (current)' : ''}`,
              }))
            : [{ value: sub.planId, label: `${cadenceLabel(sub)} (current)` }]
        }
        registration={form.register('planId')}
        error={form.formState.errors.planId}
      />
      <TextInput
        label="Seats"
        type="number"
        width="sm"
        min={1}
        max={100}
        registration={form.register('quantity', { valueAsNumber: true })}
        error={form.formState.errors.quantity}
      />
      <div role="status" aria-live="polite" className="mb-4 text-sm">
        {!changed ? (
          <p className="m-0 text-muted">Choose another plan or another number of seats.</p>
        ) : preview.data ? (
          <dl className="facts" aria-label="What the change charges">
            <dt>Charged now</dt>
            <dd className="tabular-nums">{money(preview.data.amountDue)}</dd>
            <dt>Then</dt>
            <dd>
              {money(preview.data.amount)} / {cadenceLabel(preview.data, true)}
              {preview.data.nextChargeAt ? ` from ${formatDate(preview.data.nextChargeAt)}` : ''}
            </dd>
            {preview.data.creditBalance > 0 && (
              <>
                <dt>Credit kept</dt>
                <dd className="tabular-nums">{money(preview.data.creditBalance)}</dd>
              </>
            )}
          </dl>
        ) : preview.isFetching ? (
          <p className="m-0 text-muted">Working out the amount…</p>
        ) : null}
      </div>
      <ErrorNote error={preview.error} />
      <ErrorNote error={update.error} />
      <div className="actions">
        <button type="button" className={buttonClass('secondary')} onClick={close}>
          Close
        </button>
        <button
          type="submit"
          className={buttonClass('primary')}
          disabled={update.isPending || !changed || !preview.data}
        >
          Change plan
        </button>
      </div>
    </form>
  );
}

/** A `datetime-local` value for an instant, in the browser's time zone. */
function localInput(iso: string): string {
  const at = new Date(iso);
  return new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

const ZAdvanceForm = z.object({
  to: z
    .string()
    .min(1, 'Choose a date and time.')
    .refine((value) => !Number.isNaN(new Date(value).getTime()), 'Choose a date and time.'),
});
type AdvanceForm = z.input<typeof ZAdvanceForm>;

/** A test subscription's clock: moved forward, running what falls due on the way, then what that created. */
function AdvanceClock({ subscription: sub }: { subscription: Subscription }) {
  const done = useSubscriptionChanged();
  const [result, setResult] = useState<Advanced | null>(null);
  const queryClient = useQueryClient();
  const advance = useMutation(
    trpc.subscriptions.advance.mutationOptions({
      onSuccess: async (answer) => {
        setResult(answer);
        await done(answer.subscription);
        await queryClient.invalidateQueries(trpc.orders.get.pathFilter());
      },
    }),
  );
  const from = sub.clockTime ?? sub.currentPeriodEnd;
  // One day past the period's end: the next renewal runs.
  const suggested = localInput(new Date(new Date(sub.currentPeriodEnd).getTime() + 86_400_000).toISOString());
  const form = useForm<AdvanceForm>({ resolver: zodResolver(ZAdvanceForm), defaultValues: { to: suggested } });
  return (
    <Card
      id="test-clock"
      title="Test clock"
      description={`This test subscription's time is ${formatDateTime(from)}. Advance it to run what falls due.`}
    >
      <form
        className="toolbar"
        noValidate
        onSubmit={onValid(form, (values) =>
          advance.mutate({ storeId: sub.storeId, subscriptionId: sub.id, to: new Date(values.to).toISOString() }),
        )}
      >
        <TextInput
          label="Advance clock to"
          type="datetime-local"
          width="md"
          registration={form.register('to')}
          error={form.formState.errors.to}
        />
        <button type="submit" className={buttonClass('primary')} disabled={advance.isPending}>
          Advance
        </button>
      </form>
      <ErrorNote error={advance.error} />
      {result && (
        <div role="status" className="mt-2 text-sm">
          <p className="m-0 font-medium">
            Advanced to {formatDateTime(result.subscription.clockTime)}:{' '}
            {result.orders.length === 0
              ? 'no order created'
              : `${result.orders.length} order${result.orders.length === 1 ? '' : 's'} created`}
            {result.events.length === 0 ? ', no events.' : '.'}
          </p>
          {result.orders.length > 0 && (
            <DataTable
              caption="Orders the clock created"
              rows={result.orders}
              rowKey={(order) => order.id}
              empty="None."
              columns={[
                {
                  header: 'Order',
                  cell: (order) => (
                    <Link
                      to="/stores/$storeId/orders/$orderId"
                      params={{ storeId: sub.storeId, orderId: order.orderId }}
                    >
                      {order.orderId}
                    </Link>
                  ),
                },
                { header: 'Reason', cell: (order) => REASON_WORDS[order.billingReason] ?? order.billingReason },
                { header: 'Status', cell: (order) => <StatusBadge kind="order" status={order.status} /> },
                { header: 'Amount', numeric: true, cell: (order) => formatMoney(order.price, sub.currency) },
              ]}
            />
          )}
          {result.events.length > 0 && (
            <>
              <p className="m-0 mt-3 font-medium">Events</p>
              <ul aria-label="Events the clock emitted" className="m-0 pl-5">
                {result.events.map((event, index) => (
                  <li key={`${event}:${index}`}>
                    <code>{event}</code>
                  </li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
    </Card>
  );
}
