/**
 * Tickets: the store's support tickets, newest activity first (subject, status, the buyer, when),
 * keyset-paged with the cursor in the URL. Everything here needs viewOrders, as the API does.
 */
import { useQuery } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { trpc, type RouterOutputs } from '../../api';
import { useStore, useStoreId } from '../../store';
import { Loaded } from '../../ui/feedback';
import { formatDateTime } from '../../ui/format';
import { KeysetPager } from '../../ui/pager';
import { DataTable } from '../../ui/table';
import { EmptyState, PageHeader } from '../../ui/layout';
import { StatusBadge } from '../../ui/badge';

const ticketsRoute = getRouteApi('/app/stores/$storeId/tickets');

type TicketSummary = RouterOutputs['tickets']['dashboardList']['tickets'][number];

export const TICKET_STATUS_LABELS: Record<TicketSummary['status'], string> = {
  open: 'Open',
  answered: 'Answered',
  closed: 'Closed',
};

export function Tickets() {
  const storeId = useStoreId();
  const { store, can } = useStore();
  const allowed = can('viewOrders');
  const { cursor } = ticketsRoute.useSearch();
  const tickets = useQuery(trpc.tickets.dashboardList.queryOptions({ storeId, cursor }, { enabled: allowed }));
  if (store && !allowed) {
    return (
      <>
        <PageHeader title="Tickets" description="Buyers' questions about their orders." />
        <p>Tickets need the viewOrders permission, which you do not have in this store.</p>
      </>
    );
  }
  return (
    <>
      <PageHeader title="Tickets" description="Buyers' questions about their orders." />
      <Loaded query={tickets} label="Loading tickets…">
        {(data) => (
          <>
            <DataTable<TicketSummary>
              caption="Tickets"
              rows={data.tickets}
              rowKey={(ticket) => ticket.id}
              empty={
                cursor ? (
                  'No more tickets.'
                ) : (
                  <EmptyState title="No tickets yet.">
                    Buyers ask about an order from their order page; each question arrives here and by e-mail.
                  </EmptyState>
                )
              }
              columns={[
                {
                  header: 'Subject',
                  cell: (ticket) => (
                    <Link to="/stores/$storeId/tickets/$ticketId" params={{ storeId, ticketId: ticket.id }}>
                      {ticket.subject}
                    </Link>
                  ),
                },
                {
                  header: 'Status',
                  cell: (ticket) => (
                    <StatusBadge kind="ticket" status={ticket.status} label={TICKET_STATUS_LABELS[ticket.status]} />
                  ),
                },
                { header: 'Customer', cell: (ticket) => ticket.customerEmail ?? '—' },
                {
                  header: 'Order',
                  cell: (ticket) => (
                    <Link to="/stores/$storeId/orders/$orderId" params={{ storeId, orderId: ticket.orderId }}>
                      {ticket.orderNumber}
                    </Link>
                  ),
                },
                { header: 'Messages', numeric: true, cell: (ticket) => ticket.messageCount },
                { header: 'Updated', cell: (ticket) => formatDateTime(ticket.updatedAt) },
              ]}
            />
            <KeysetPager from="/stores/$storeId/tickets" cursor={cursor} nextCursor={data.nextCursor} />
          </>
        )}
      </Loaded>
    </>
  );
}
