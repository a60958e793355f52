/**
 * Customers: every buyer of the store by e-mail address, whether or not they signed in to its
 * customer area, with their paid orders, what they spent and their last order; an e-mail prefix
 * search (`q`) and the keyset cursor live in the URL. Needs viewOrders, as the API does.
 */
import { useQuery } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { useState } from 'react';
import { trpc, type RouterOutputs } from '../../api';
import { useStore, useStoreId } from '../../store';
import { Loaded } from '../../ui/feedback';
import { formatDate, formatMoney } from '../../ui/format';
import { KeysetPager } from '../../ui/pager';
import { DataTable } from '../../ui/table';
import { buttonClass } from '../../ui/button';
import { PageHeader } from '../../ui/layout';

const customersRoute = getRouteApi('/app/stores/$storeId/customers');

type Customer = RouterOutputs['customers']['dashboardList']['customers'][number];

function Search({ initial, onSearch }: { initial: string; onSearch: (q: string | undefined) => void }) {
  const [text, setText] = useState(initial);
  return (
    <form
      role="search"
      className="toolbar"
      onSubmit={(event) => {
        event.preventDefault();
        onSearch(text.trim() || undefined);
      }}
    >
      <div className="field">
        <label htmlFor="customer-search">Search</label>
        <input
          id="customer-search"
          type="search"
          maxLength={320}
          aria-describedby="customer-search-hint"
          value={text}
          onChange={(event) => setText(event.target.value)}
        />
        <span id="customer-search-hint" className="hint">
          The start of an e-mail address.
        </span>
      </div>
      <button type="submit" className={buttonClass('secondary')}>
        Search
      </button>
    </form>
  );
}

export function Customers() {
  const storeId = useStoreId();
  const { store, can } = useStore();
  const allowed = can('viewOrders');
  const { cursor, q } = customersRoute.useSearch();
  const navigate = customersRoute.useNavigate();
  const customers = useQuery(
    trpc.customers.dashboardList.queryOptions({ storeId, cursor, search: q }, { enabled: allowed }),
  );
  const currency = store?.currency ?? 'USD';
  if (store && !allowed) {
    return (
      <>
        <PageHeader title="Customers" description="Buyers of this store, with their orders and what they spent." />
        <p>Customers need the viewOrders permission, which you do not have in this store.</p>
      </>
    );
  }
  return (
    <>
      <PageHeader title="Customers" description="Buyers of this store, with their orders and what they spent." />
      <p className="muted">
        Everyone who bought from your store, by e-mail, whether or not they signed in to its customer area. Orders and
        spend count paid orders that were not refunded.
      </p>
      {/* Keyed by q, so the field shows the URL's search after Back or a shared link. */}
      <Search key={q ?? ''} initial={q ?? ''} onSearch={(next) => void navigate({ search: { q: next } })} />
      <Loaded query={customers} label="Loading customers…">
        {(data) => (
          <>
            <DataTable<Customer>
              caption="Customers"
              rows={data.customers}
              rowKey={(customer) => customer.email}
              empty={q ? 'No customer’s e-mail starts with that.' : cursor ? 'No more customers.' : 'No customers yet.'}
              columns={[
                { header: 'Email', cell: (customer) => customer.email },
                { header: 'Orders', numeric: true, cell: (customer) => customer.orders },
                { header: 'Spent', numeric: true, cell: (customer) => formatMoney(customer.spent, currency) },
                {
                  header: 'Last order',
                  cell: (customer) => (customer.lastOrderAt ? formatDate(customer.lastOrderAt) : 'None'),
                },
                { header: 'Since', cell: (customer) => formatDate(customer.createdAt) },
                { header: 'Customer area', cell: (customer) => (customer.id ? 'Signed in' : 'Never signed in') },
              ]}
            />
            <KeysetPager from="/stores/$storeId/customers" cursor={cursor} nextCursor={data.nextCursor} />
          </>
        )}
      </Loaded>
    </>
  );
}
