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
import { Fragment } from 'react';
import { useForm } from 'react-hook-form';
import type { z } from 'zod';
import { downloadFile, trpc, type RouterOutputs } from '../../api';
import { useStore, useStoreId } from '../../store';
import { ConfirmAction, FormDialog } from '../../ui/dialogs';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { TextArea } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { formatDateTime, formatMoney } from '../../ui/format';
import { DataTable } from '../../ui/table';

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
    <section aria-labelledby="timeline">
      <h2 id="timeline">Timeline</h2>
      <Loaded query={timeline} label="Loading the timeline…">
        {({ events }) => (
          <ol className="timeline">
            {events.map((event) => (
              <li key={`${event.type}:${event.at}`}>
                <time dateTime={event.at}>{formatDateTime(event.at)}</time> {TIMELINE_WORDS[event.type]}
                {event.text ? `: ${event.text}` : ''}
              </li>
            ))}
          </ol>
        )}
      </Loaded>
    </section>
  );
}

export function OrderPage() {
  const storeId = useStoreId();
  const { orderId } = orderRoute.useParams();
  const order = useQuery(trpc.orders.get.queryOptions({ storeId, orderId }));
  return (
    <Loaded query={order} label="Loading the order…">
      {(data) => <OrderView order={data} />}
    </Loaded>
  );
}

/** The buyer's proof of a manual payment, fetched with the mode and CSRF headers (a plain link sends neither). */
function PaymentProof({ order }: { order: Order }) {
  const url = `/api/dashboard/stores/${encodeURIComponent(order.storeId)}/orders/${encodeURIComponent(order.id)}/payment-proof`;
  const download = useMutation({ mutationFn: () => downloadFile(url, `payment-proof-${order.orderId}`) });
  return (
    <>
      <p>
        <button type="button" className="button" onClick={() => download.mutate()} disabled={download.isPending}>
          Payment proof
        </button>{' '}
        <span className="muted">(the file the buyer sent, if they sent one)</span>
      </p>
      <ErrorNote error={download.error} />
    </>
  );
}

function OrderView({ order }: { order: Order }) {
  const { store, can } = useStore();
  const currency = store?.currency ?? 'USD';
  const money = (amount: number) => formatMoney(amount, currency);
  const mayEdit = can('editOrders');
  return (
    <>
      <p>
        <Link to="/stores/$storeId/orders" params={{ storeId: order.storeId }} search={{}}>
          All orders
        </Link>
      </p>
      <h1>Order {order.orderId}</h1>
      <dl className="facts">
        <dt>Status</dt>
        <dd>{order.status}</dd>
        <dt>Total</dt>
        <dd>{money(order.price)}</dd>
        <dt>Placed</dt>
        <dd>{formatDateTime(order.createdAt)}</dd>
      </dl>

      {mayEdit && <OrderActions order={order} money={money} />}

      <section aria-labelledby="lines">
        <h2 id="lines">Lines</h2>
        <DataTable<Line>
          caption="Order lines"
          rows={order.lines}
          rowKey={(line) => line.id}
          empty="This order has no lines."
          columns={[
            { header: 'Product', cell: (line) => line.productName },
            { header: 'Quantity', numeric: true, cell: (line) => line.quantity },
            { header: 'Unit price', numeric: true, cell: (line) => money(line.unitPrice) },
            { header: 'Line total', numeric: true, cell: (line) => money(line.unitPrice * line.quantity) },
          ]}
        />
      </section>

      <section aria-labelledby="buyer">
        <h2 id="buyer">Buyer</h2>
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
        <p>
          <a href={order.orderUrl}>The buyer&apos;s order page</a>
        </p>
      </section>

      <section aria-labelledby="payment">
        <h2 id="payment">Payment</h2>
        <dl className="facts">
          <dt>Method</dt>
          <dd>{order.paymentMethod || 'Not chosen yet'}</dd>
          <dt>Price</dt>
          <dd>{money(order.price)}</dd>
          <dt>Paid</dt>
          <dd>{money(order.paid)}</dd>
        </dl>
        {order.paymentMethod === 'manual' && <PaymentProof order={order} />}
      </section>

      <section aria-labelledby="delivered">
        <h2 id="delivered">Delivered</h2>
        {order.lines.map((line) => (
          <Delivered key={line.id} line={line} />
        ))}
      </section>

      <section aria-labelledby="note">
        <h2 id="note">Note</h2>
        {mayEdit ? (
          <NoteForm order={order} />
        ) : (
          <p className={order.note ? undefined : 'muted'}>{order.note || 'No note.'}</p>
        )}
      </section>

      <Timeline storeId={order.storeId} orderId={order.orderId} />
    </>
  );
}

function Delivered({ line }: { line: Line }) {
  const { licenseKeys, downloadFiles, deliveryInstructions, manualDelivery } = line.delivered;
  const nothing = !licenseKeys.length && !downloadFiles.length && !deliveryInstructions && !manualDelivery;
  return (
    <>
      <h3>{line.productName}</h3>
      {nothing && <p className="muted">Nothing delivered.</p>}
      {licenseKeys.length > 0 && (
        <DataTable
          caption={`License keys of ${line.productName}`}
          rows={licenseKeys}
          rowKey={(key) => key.id}
          empty="No keys."
          columns={[
            { header: 'Key', cell: (key) => <code>{key.masked}</code> },
            { header: 'Key status', cell: (key) => (key.status === 'revoked' ? 'disabled' : 'active') },
          ]}
        />
      )}
      {downloadFiles.length > 0 && (
        <ul aria-label={`Files of ${line.productName}`}>
          {downloadFiles.map((file) => (
            <li key={file.id}>
              {file.name} <span className="muted">({Math.max(1, Math.round(file.size / 1024))} KB)</span>
            </li>
          ))}
        </ul>
      )}
      {deliveryInstructions && <p>Instructions: {deliveryInstructions}</p>}
      {manualDelivery && <p>Delivery by hand: {manualDelivery === 'delivered' ? 'delivered' : 'not delivered yet'}</p>}
    </>
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
      <button type="submit" className="button" disabled={save.isPending}>
        Save note
      </button>
      <span role="status" className="muted">
        {save.isSuccess && !form.formState.isDirty ? ' Note saved.' : ''}
      </span>
    </form>
  );
}

function OrderActions({ order, money }: { order: Order; money: (amount: number) => string }) {
  const done = useOrderActionDone();
  const ref = { storeId: order.storeId, orderId: order.orderId };
  const markPaid = useMutation(trpc.orders.markPaid.mutationOptions({ onSuccess: done }));
  const cancel = useMutation(trpc.orders.cancel.mutationOptions({ onSuccess: done }));
  const refund = useMutation(trpc.orders.refund.mutationOptions({ onSuccess: done }));
  const pending = order.status === 'pending';
  const deliverable = isPaid(order) && order.lines.some((line) => line.delivered.manualDelivery === 'pending');
  const manual = order.paymentMethod === 'manual' || order.paymentMethod === '';
  if (!pending && !isPaid(order)) return null;
  return (
    <section aria-labelledby="actions">
      <h2 id="actions">Actions</h2>
      <div className="actions">
        {deliverable && <MarkDelivered order={order} />}
        {pending && manual && (
          <ConfirmAction
            verb="Mark paid"
            destructive={false}
            title={`Mark ${order.orderId} paid?`}
            pending={markPaid.isPending}
            error={markPaid.error}
            onConfirm={() => markPaid.mutateAsync(ref)}
          >
            <p>Do this once the payment of {money(order.price)} has arrived: the order is settled and delivered.</p>
          </ConfirmAction>
        )}
        {pending && (
          <ConfirmAction
            verb="Cancel order"
            title={`Cancel ${order.orderId}?`}
            pending={cancel.isPending}
            error={cancel.error}
            onConfirm={() => cancel.mutateAsync(ref)}
          >
            <p>The buyer can no longer pay for it; a coupon it used is given back.</p>
          </ConfirmAction>
        )}
        {isPaid(order) && (
          <ConfirmAction
            verb="Refund"
            title={`Refund ${order.orderId}?`}
            pending={refund.isPending}
            error={refund.error}
            onConfirm={() => refund.mutateAsync(ref)}
          >
            <p>
              The payment goes back to the buyer (at Stripe for a Stripe payment), its license keys are disabled and the
              delivery is withdrawn. This cannot be undone.
            </p>
          </ConfirmAction>
        )}
      </div>
    </section>
  );
}

function MarkDelivered({ order }: { order: Order }) {
  const done = useOrderActionDone();
  const schema = ZMarkDeliveredInput.pick({ content: true });
  const form = useForm<z.input<typeof schema>>({ resolver: zodResolver(schema), defaultValues: { content: '' } });
  const deliver = useMutation(trpc.orders.markDelivered.mutationOptions({ onSuccess: done }));
  return (
    <FormDialog trigger="Mark delivered" title={`Mark ${order.orderId} delivered`}>
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
            <button type="button" className="button" onClick={close}>
              Close
            </button>
            <button type="submit" className="button primary" disabled={deliver.isPending}>
              Mark delivered
            </button>
          </div>
        </form>
      )}
    </FormDialog>
  );
}
