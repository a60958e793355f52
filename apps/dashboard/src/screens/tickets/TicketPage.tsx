/**
 * One ticket: its order and buyer, the thread (who wrote, when), a reply form (the buyer is
 * e-mailed it) and `Close ticket` / `Reopen ticket`. All of it needs viewOrders, as the API does.
 */
import { zodResolver } from '@hookform/resolvers/zod';
import { ZStaffTicketReplyInput } from '@svc/schemas';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useForm } from 'react-hook-form';
import type { z } from 'zod';
import { trpc } from '../../api';
import { useStore, useStoreId } from '../../store';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { TextArea } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { formatDateTime } from '../../ui/format';
import { TICKET_STATUS_LABELS } from './Tickets';
import { buttonClass } from '../../ui/button';
import { StatusBadge } from '../../ui/badge';
import { Card } from '../../ui/layout';

const ticketRoute = getRouteApi('/app/stores/$storeId/tickets/$ticketId');

const ZReplyForm = ZStaffTicketReplyInput.pick({ message: true });
type ReplyForm = z.input<typeof ZReplyForm>;

function useRefreshTicket() {
  const queryClient = useQueryClient();
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.tickets.dashboardGet.queryKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.tickets.dashboardList.queryKey() }),
    ]);
}

function Reply({ ticketId }: { ticketId: string }) {
  const storeId = useStoreId();
  const refresh = useRefreshTicket();
  const form = useForm<ReplyForm, unknown, z.output<typeof ZReplyForm>>({
    resolver: zodResolver(ZReplyForm),
    defaultValues: { message: '' },
  });
  const reply = useMutation(
    trpc.tickets.dashboardAddMessage.mutationOptions({
      onSuccess: async () => {
        form.reset({ message: '' });
        await refresh();
      },
    }),
  );
  return (
    <Card id="ticket-reply" title="Reply">
      <form noValidate onSubmit={onValid(form, (values) => reply.mutate({ storeId, ticketId, ...values }))}>
        <TextArea
          label="Message"
          hint="Plain text; the buyer gets it by e-mail."
          registration={form.register('message')}
          error={form.formState.errors.message}
        />
        <ErrorNote error={reply.error} />
        <button type="submit" className={buttonClass('primary')} disabled={reply.isPending}>
          Send reply
        </button>
      </form>
    </Card>
  );
}

function StatusChange({ ticketId, closed }: { ticketId: string; closed: boolean }) {
  const storeId = useStoreId();
  const refresh = useRefreshTicket();
  const update = useMutation(trpc.tickets.dashboardUpdate.mutationOptions({ onSuccess: refresh }));
  return (
    <div>
      <button
        type="button"
        className={buttonClass('secondary')}
        disabled={update.isPending}
        onClick={() => update.mutate({ storeId, ticketId, status: closed ? 'open' : 'closed' })}
      >
        {closed ? 'Reopen ticket' : 'Close ticket'}
      </button>
      <ErrorNote error={update.error} />
    </div>
  );
}

/** The buyer's e-mail comes with the order (one batched round trip with the ticket). */
function Buyer({ orderId }: { orderId: string }) {
  const storeId = useStoreId();
  const order = useQuery(trpc.orders.get.queryOptions({ storeId, orderId }));
  if (order.error) return <>—</>;
  return <>{order.data ? order.data.customerEmail || '—' : '…'}</>;
}

export function TicketPage() {
  const storeId = useStoreId();
  const { ticketId } = ticketRoute.useParams();
  const { store, can } = useStore();
  const allowed = can('viewOrders');
  const ticket = useQuery(trpc.tickets.dashboardGet.queryOptions({ storeId, ticketId }, { enabled: allowed }));
  if (store && !allowed) {
    return (
      <>
        <h1>Ticket</h1>
        <p>Tickets need the viewOrders permission, which you do not have in this store.</p>
      </>
    );
  }
  return (
    <Loaded query={ticket} label="Loading the ticket…">
      {(data) => (
        <>
          <p>
            <Link to="/stores/$storeId/tickets" params={{ storeId }}>
              All tickets
            </Link>
          </p>
          <h1>{data.subject}</h1>
          <dl className="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge kind="ticket" status={data.status} label={TICKET_STATUS_LABELS[data.status]} />
            </dd>
            <dt>Order</dt>
            <dd>
              <Link to="/stores/$storeId/orders/$orderId" params={{ storeId, orderId: data.orderId }}>
                {data.orderNumber}
              </Link>
            </dd>
            <dt>Customer</dt>
            <dd>
              <Buyer orderId={data.orderId} />
            </dd>
            <dt>Opened</dt>
            <dd>{formatDateTime(data.createdAt)}</dd>
          </dl>
          <StatusChange ticketId={data.id} closed={data.status === 'closed'} />
          <Card id="ticket-thread" title="Messages">
            <ol className="thread">
              {data.messages.map((message) => (
                <li key={message.id} className={message.author === 'staff' ? 'message staff' : 'message'}>
                  <p className="message-meta">
                    <strong>{message.author === 'staff' ? 'Staff' : 'Buyer'}</strong>{' '}
                    <time dateTime={message.createdAt}>{formatDateTime(message.createdAt)}</time>
                  </p>
                  <p className="message-body">{message.body}</p>
                </li>
              ))}
            </ol>
          </Card>
          <Reply ticketId={data.id} />
        </>
      )}
    </Loaded>
  );
}
