/**
 * One order: its lines, the buyer, the payment, what was delivered (keys masked as the API gives
 * them), the seller's note, and what a member with editOrders may do to it (note, mark delivered,
 * mark paid, cancel, refund), each offered only when the order's status allows it and each
 * showing the API's error where it was taken. A member without editOrders sees no action.
 */
import { zodResolver } from '@hookform/resolvers/zod';
import { ZMarkDeliveredInput, ZUpdateOrderBody } from '@svc/schemas';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { Fragment, useState } from 'react';
import { useForm } from 'react-hook-form';
import type { z } from 'zod';
import { downloadFile, trpc, type RouterOutputs } from '../../api';
import { useStore, useStoreId } from '../../store';
import { StatusBadge, statusLabel } from '../../ui/badge';
import { ConfirmAction, ConfirmDialog, FormDialog } from '../../ui/dialogs';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { TextArea } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { formatDateTime, formatMoney } from '../../ui/format';
import { Card, PageHeader, Stack } from '../../ui/layout';
import { ActionMenu } from '../../ui/menu';
import { DataTable } from '../../ui/table';
import { buttonClass } from '../../ui/button';

const orderRoute = getRouteApi('/app/stores/$storeId/orders/$orderId');

type Order = RouterOutputs['orders']['get'];
type Line = Order['lines'][number];
type Timeline = RouterOutputs['orders']['dashboardTimeline'];

const PAID = ['paid', 'processing', 'completed'] as const;
const isPaid = (order: Order) => (PAID as readonly string[]).includes(order.status);

/** After an action: this order's new state in the cache, and the lists that show it refetched. */
function useOrderActionDone() {
  const queryClient = useQueryClient();
  return async (order: Order) => {
    queryClient.setQueryData(trpc.orders.get.queryKey({ storeId: order.storeId, orderId: order.orderId }), order);
    await queryClient.invalidateQueries(trpc.orders.dashboardList.pathFilter());
    await queryClient.invalidateQueries(trpc.orders.get.pathFilter());
    await queryClient.invalidateQueries(trpc.orders.dashboardTimeline.pathFilter());
  };
}

const TIMELINE_WORDS: Record<Timeline['events'][number]['type'], string> = {
  created: 'Placed',
  paid: 'Paid',
  delivered: 'Delivered',
  completed: 'Completed',
  refunded: 'Refunded',
  cancelled: 'Cancelled',
  expired: 'Expired',
};

/** What happened to the order, oldest first (orders.dashboardTimeline, from the order's own timestamps). */
function Timeline({ storeId, orderId }: { storeId: string; orderId: string }) {
  const timeline = useQuery(trpc.orders.dashboardTimeline.queryOptions({ storeId, orderId }));
  return (
    <Card id="timeline" title="Timeline">
      <Loaded query={timeline} label="Loading the timeline…" lines={3}>
        {({ events }) => (
          <ol className="timeline">
            {events.map((event) => (
              <li key={`${event.type}:${event.at}`}>
                <span className="font-medium">{TIMELINE_WORDS[event.type]}</span>
                {event.text ? `: ${event.text}` : ''}{' '}
                <time dateTime={event.at} className="block text-muted">
                  {formatDateTime(event.at)}
                </time>
              </li>
            ))}
          </ol>
        )}
      </Loaded>
    </Card>
  );
}

export function OrderPage() {
  const storeId = useStoreId();
  const { orderId } = orderRoute.useParams();
  const order = useQuery(trpc.orders.get.queryOptions({ storeId, orderId }));
  return (
    <Loaded query={order} label="Loading the order…" lines={8}>
      {(data) => <OrderView order={data} />}
    </Loaded>
  );
}

/** The buyer's proof of a manual payment, fetched with the mode and CSRF headers (a plain link sends neither). */
function PaymentProof({ order }: { order: Order }) {
  const url = `/api/dashboard/stores/${encodeURIComponent(order.storeId)}/orders/${encodeURIComponent(order.id)}/payment-proof`;
  const download = useMutation({ mutationFn: () => downloadFile(url, `payment-proof-${order.orderId}`) });
  return (
    <div className="mt-4">
      <button
        type="button"
        className={buttonClass('secondary')}
        onClick={() => download.mutate()}
        disabled={download.isPending}
      >
        Payment proof
      </button>
      <p className="m-0 mt-1 text-sm text-muted">The file the buyer sent, if they sent one.</p>
      <ErrorNote error={download.error} />
    </div>
  );
}

/** The tax line of the summary: its rate and country, or the reverse charge (nothing while the store's tax was off). */
function TaxFacts({ order, money }: { order: Order; money: (amount: number) => string }) {
  if (!order.taxCountry) return null;
  const rate = order.taxRate === null ? '' : `${Math.round(order.taxRate * 1e6) / 1e4}%`;
  // Inclusive prices hold the tax: the price is the subtotal less the discount, tax and all.
  const included = order.taxAmount > 0 && Math.abs(order.subtotal - order.discount - order.price) < 1e-9;
  return (
    <>
      <dt className="text-muted">
        Tax{rate && ` ${rate}`} ({order.taxCountry}){included && ', included'}
        {order.reverseCharge && (
          <>
            {' '}
            <StatusBadge kind="tax" status="reverse charge" />
          </>
        )}
      </dt>
      <dd className="m-0 text-right tabular-nums">{money(order.taxAmount)}</dd>
    </>
  );
}

/** The invoice and, once refunded, the credit note, as PDFs (fetched with the mode and CSRF headers, as the proof is). */
function InvoiceDownloads({ order }: { order: Order }) {
  const base = `/api/dashboard/stores/${encodeURIComponent(order.storeId)}/orders/${encodeURIComponent(order.id)}`;
  const invoice = useMutation({ mutationFn: () => downloadFile(`${base}/invoice`, `${order.invoiceNumber}.pdf`) });
  const creditNote = useMutation({
    mutationFn: () => downloadFile(`${base}/credit-note`, `${order.creditNoteNumber}.pdf`),
  });
  return (
    <div className="mt-4 flex flex-col items-start gap-2">
      <button
        type="button"
        className={buttonClass('secondary')}
        onClick={() => invoice.mutate()}
        disabled={invoice.isPending}
      >
        Download invoice {order.invoiceNumber}
      </button>
      <ErrorNote error={invoice.error} />
      {order.creditNoteNumber && (
        <>
          <button
            type="button"
            className={buttonClass('secondary')}
            onClick={() => creditNote.mutate()}
            disabled={creditNote.isPending}
          >
            Download credit note {order.creditNoteNumber}
          </button>
          <ErrorNote error={creditNote.error} />
        </>
      )}
    </div>
  );
}

/**
 * Medusa Admin's order page: the header with the status and the actions (the main one a button,
 * the rest in `More actions`), then the summary (lines and totals), what was delivered, the note
 * and the timeline in the wide column; the customer and the payment beside them.
 */
function OrderView({ order }: { order: Order }) {
  const { store, can } = useStore();
  const currency = store?.currency ?? 'USD';
  const money = (amount: number) => formatMoney(amount, currency);
  const mayEdit = can('editOrders');
  // Taxed: the lines' total before the discount (and before tax added on top), as the server
  // worked it out. Untaxed: the price plus the discount, both exact from the order.
  const subtotal = order.taxCountry ? order.subtotal : Math.round((order.price + order.discount) * 1e6) / 1e6;
  return (
    <>
      <PageHeader
        back={
          <Link to="/stores/$storeId/orders" params={{ storeId: order.storeId }} search={{}}>
            ← All orders
          </Link>
        }
        title={`Order ${order.orderId}`}
        badge={<StatusBadge kind="order" status={order.status} />}
        description={`Placed ${formatDateTime(order.createdAt)}`}
        actions={mayEdit ? <OrderActions order={order} money={money} /> : undefined}
      />
      <div className="grid min-w-0 gap-6 lg:grid-cols-[minmax(0,1fr)_20rem]">
        <Stack>
          <Card id="summary" title="Summary" flush>
            <DataTable<Line>
              caption="Order lines"
              bare
              rows={order.lines}
              rowKey={(line) => line.id}
              empty="This order has no lines."
              columns={[
                { header: 'Product', cell: (line) => line.productName, wrap: true },
                { header: 'Quantity', numeric: true, cell: (line) => line.quantity },
                { header: 'Unit price', numeric: true, cell: (line) => money(line.unitPrice) },
                { header: 'Line total', numeric: true, cell: (line) => money(line.unitPrice * line.quantity) },
              ]}
            />
            <dl className="m-0 grid grid-cols-[1fr_auto] gap-x-6 gap-y-1.5 border-t border-line px-5 py-4 text-sm">
              <dt className="text-muted">Status</dt>
              <dd className="m-0 text-right">{statusLabel(order.status)}</dd>
              <dt className="text-muted">Subtotal</dt>
              <dd className="m-0 text-right tabular-nums">{money(subtotal)}</dd>
              {order.discount > 0 && (
                <>
                  <dt className="text-muted">
                    Discount
                    {order.couponCode && (
                      <>
                        {' '}
                        (coupon <code className="font-mono text-fg">{order.couponCode}</code>)
                      </>
                    )}
                  </dt>
                  <dd className="m-0 text-right tabular-nums">−{money(order.discount)}</dd>
                </>
              )}
              <TaxFacts order={order} money={money} />
              <dt className="font-semibold">Total</dt>
              <dd className="m-0 text-right font-semibold tabular-nums">{money(order.price)}</dd>
              <dt className="text-muted">Paid by the buyer</dt>
              <dd className="m-0 text-right tabular-nums">{money(order.paid)}</dd>
            </dl>
          </Card>

          <Card id="delivered" title="Delivered">
            <Stack className="gap-4">
              {order.lines.map((line) => (
                <Delivered key={line.id} line={line} />
              ))}
            </Stack>
          </Card>

          <Card id="note" title="Note">
            {mayEdit ? (
              <NoteForm order={order} />
            ) : (
              <p className={order.note ? 'm-0' : 'm-0 text-muted'}>{order.note || 'No note.'}</p>
            )}
          </Card>

          <Timeline storeId={order.storeId} orderId={order.orderId} />
        </Stack>

        <Stack>
          <Card id="buyer" title="Customer">
            <dl className="facts">
              <dt>E-mail</dt>
              <dd>{order.customerEmail || 'None given'}</dd>
              <dt>Country</dt>
              <dd>{order.country === 'XX' ? 'Unknown' : order.country}</dd>
              {order.customFieldResponses.map((field) => (
                <Fragment key={field.name}>
                  <dt>{field.name}</dt>
                  <dd>{field.value}</dd>
                </Fragment>
              ))}
            </dl>
            <p className="m-0 mt-4 text-sm">
              <a href={order.orderUrl}>The buyer&apos;s order page</a>
            </p>
          </Card>

          <Card
            id="payment"
            title="Payment"
            actions={mayEdit && isPaid(order) ? <RefundAction order={order} /> : undefined}
          >
            <dl className="facts">
              <dt>Method</dt>
              <dd>{order.paymentMethod ? statusLabel(order.paymentMethod) : 'Not chosen yet'}</dd>
              <dt>Price</dt>
              <dd>{money(order.price)}</dd>
              <dt>Paid</dt>
              <dd>{money(order.paid)}</dd>
            </dl>
            {order.paymentMethod === 'manual' && <PaymentProof order={order} />}
            {order.invoiceNumber && <InvoiceDownloads order={order} />}
          </Card>
        </Stack>
      </div>
    </>
  );
}

function Delivered({ line }: { line: Line }) {
  const { licenseKeys, downloadFiles, deliveryInstructions, manualDelivery } = line.delivered;
  const nothing = !licenseKeys.length && !downloadFiles.length && !deliveryInstructions && !manualDelivery;
  return (
    <div className="min-w-0">
      <h3 className="m-0 mb-2">{line.productName}</h3>
      {nothing && <p className="m-0 text-sm text-muted">Nothing delivered.</p>}
      {licenseKeys.length > 0 && (
        <DataTable
          caption={`License keys of ${line.productName}`}
          rows={licenseKeys}
          rowKey={(key) => key.id}
          empty="No keys."
          columns={[
            { header: 'Key', cell: (key) => <code>{key.masked}</code> },
            {
              header: 'Key status',
              cell: (key) => <StatusBadge kind="key" status={key.status === 'revoked' ? 'disabled' : 'active'} />,
            },
          ]}
        />
      )}
      {downloadFiles.length > 0 && (
        <ul aria-label={`Files of ${line.productName}`} className="m-0 pl-5 text-sm">
          {downloadFiles.map((file) => (
            <li key={file.id}>
              {file.name} <span className="muted">({Math.max(1, Math.round(file.size / 1024))} KB)</span>
            </li>
          ))}
        </ul>
      )}
      {deliveryInstructions && <p className="m-0 mt-2 text-sm">Instructions: {deliveryInstructions}</p>}
      {manualDelivery && (
        <p className="m-0 mt-2 text-sm">
          Delivery by hand: {manualDelivery === 'delivered' ? 'delivered' : 'not delivered yet'}
        </p>
      )}
    </div>
  );
}

function NoteForm({ order }: { order: Order }) {
  const done = useOrderActionDone();
  const schema = ZUpdateOrderBody.pick({ note: true }).required();
  const form = useForm<z.input<typeof schema>>({
    resolver: zodResolver(schema),
    values: { note: order.note },
    resetOptions: { keepDirtyValues: true },
  });
  const save = useMutation(trpc.orders.update.mutationOptions({ onSuccess: done }));
  return (
    <form
      noValidate
      onSubmit={onValid(form, (values) =>
        save.mutate({ storeId: order.storeId, orderId: order.orderId, note: values.note }),
      )}
    >
      <TextArea
        label="Seller note"
        hint="Only your team sees it."
        maxLength={5000}
        registration={form.register('note')}
        error={form.formState.errors.note}
      />
      <ErrorNote error={save.error} />
      <button type="submit" className={buttonClass('secondary')} disabled={save.isPending}>
        Save note
      </button>
      <span role="status" className="muted">
        {save.isSuccess && !form.formState.isDirty ? ' Note saved.' : ''}
      </span>
    </form>
  );
}

/** Refund, in the payment card: the payment goes back, after a dialog that repeats the verb. */
function RefundAction({ order }: { order: Order }) {
  const done = useOrderActionDone();
  const refund = useMutation(trpc.orders.refund.mutationOptions({ onSuccess: done }));
  return (
    <ConfirmAction
      verb="Refund"
      title={`Refund ${order.orderId}?`}
      pending={refund.isPending}
      error={refund.error}
      onConfirm={() => refund.mutateAsync({ storeId: order.storeId, orderId: order.orderId })}
    >
      <p>
        The payment goes back to the buyer (at Stripe for a Stripe payment), its license keys are disabled and the
        delivery is withdrawn. This cannot be undone.
      </p>
    </ConfirmAction>
  );
}

/** The header's actions: the one the order waits for as a button (mark delivered, mark paid), cancelling in `More actions`. */
function OrderActions({ order, money }: { order: Order; money: (amount: number) => string }) {
  const done = useOrderActionDone();
  const ref = { storeId: order.storeId, orderId: order.orderId };
  const markPaid = useMutation(trpc.orders.markPaid.mutationOptions({ onSuccess: done }));
  const cancel = useMutation(trpc.orders.cancel.mutationOptions({ onSuccess: done }));
  const [cancelling, setCancelling] = useState(false);
  const pending = order.status === 'pending';
  const deliverable = isPaid(order) && order.lines.some((line) => line.delivered.manualDelivery === 'pending');
  const manual = order.paymentMethod === 'manual' || order.paymentMethod === '';
  if (!pending && !deliverable) return null;
  return (
    <>
      {deliverable && <MarkDelivered order={order} />}
      {pending && manual && (
        <ConfirmAction
          verb="Mark paid"
          destructive={false}
          triggerVariant="primary"
          title={`Mark ${order.orderId} paid?`}
          pending={markPaid.isPending}
          error={markPaid.error}
          onConfirm={() => markPaid.mutateAsync(ref)}
        >
          <p>Do this once the payment of {money(order.price)} has arrived: the order is settled and delivered.</p>
        </ConfirmAction>
      )}
      {pending && (
        <>
          <ActionMenu
            label="More actions"
            items={[{ id: 'cancel', label: 'Cancel order', destructive: true, onAction: () => setCancelling(true) }]}
          />
          <ConfirmDialog
            verb="Cancel order"
            title={`Cancel ${order.orderId}?`}
            isOpen={cancelling}
            onOpenChange={setCancelling}
            pending={cancel.isPending}
            error={cancel.error}
            onConfirm={() => cancel.mutateAsync(ref)}
          >
            <p>The buyer can no longer pay for it; a coupon it used is given back.</p>
          </ConfirmDialog>
        </>
      )}
    </>
  );
}

function MarkDelivered({ order }: { order: Order }) {
  const done = useOrderActionDone();
  const schema = ZMarkDeliveredInput.pick({ content: true });
  const form = useForm<z.input<typeof schema>>({ resolver: zodResolver(schema), defaultValues: { content: '' } });
  const deliver = useMutation(trpc.orders.markDelivered.mutationOptions({ onSuccess: done }));
  return (
    <FormDialog
      trigger="Mark delivered"
      title={`Mark ${order.orderId} delivered`}
      triggerClass={buttonClass('primary')}
    >
      {(close) => (
        <form
          noValidate
          onSubmit={onValid(form, (values) =>
            deliver.mutate(
              { storeId: order.storeId, orderId: order.orderId, content: values.content || undefined },
              { onSuccess: close },
            ),
          )}
        >
          <TextArea
            label="What you delivered"
            hint="Optional: shown to the buyer on their order page."
            maxLength={20_000}
            registration={form.register('content')}
            error={form.formState.errors.content}
          />
          <ErrorNote error={deliver.error} />
          <div className="actions">
            <button type="button" className={buttonClass('secondary')} onClick={close}>
              Close
            </button>
            <button type="submit" className={buttonClass('primary')} disabled={deliver.isPending}>
              Mark delivered
            </button>
          </div>
        </form>
      )}
    </FormDialog>
  );
}
