import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { trpc, type RouterOutputs } from '../../api';
import { useStore, useStoreId } from '../../store';
import { Loaded } from '../../ui/feedback';
import { formatMoney } from '../../ui/format';
import { StatusBadge } from '../../ui/badge';
import { EmptyState, PageHeader } from '../../ui/layout';
import { DataTable, type ColumnDef } from '../../ui/table';
import { DELIVERY_LABELS, STATUS_LABELS } from './ProductForm';
import { buttonClass } from '../../ui/button';

type Product = RouterOutputs['catalog']['dashboardList']['products'][number];

/** A keyed product's available keys; others are not limited by stock. */
export function stockText(product: Pick<Product, 'stock'>): string {
  return product.stock === null ? 'Not limited' : `${product.stock} available`;
}

export function Products() {
  const storeId = useStoreId();
  const { can } = useStore();
  const products = useQuery(trpc.catalog.dashboardList.queryOptions({ storeId }));
  const columns: ColumnDef<Product>[] = [
    {
      header: 'Name',
      cell: (p) => (
        <Link to="/stores/$storeId/products/$productId" params={{ storeId, productId: p.id }}>
          {p.name}
        </Link>
      ),
    },
    { header: 'Status', cell: (p) => <StatusBadge kind="product" status={p.status} label={STATUS_LABELS[p.status]} /> },
    { header: 'Price', numeric: true, cell: (p) => formatMoney(p.price, p.currency) },
    { header: 'Delivery', wrap: true, cell: (p) => p.deliveryMethods.map((m) => DELIVERY_LABELS[m]).join(', ') },
    { header: 'Stock', numeric: true, cell: stockText },
  ];
  const newProduct = can('manageProducts') ? (
    <Link to="/stores/$storeId/products/new" params={{ storeId }} className={buttonClass('primary')}>
      New product
    </Link>
  ) : undefined;
  return (
    <>
      <PageHeader
        title="Products"
        description="What your store sells: price, delivery and stock."
        // Once there are products; an empty store has the action in its empty state instead.
        actions={products.data?.products.length ? newProduct : undefined}
      />
      <Loaded query={products} label="Loading products…">
        {(data) => (
          <DataTable
            caption="Products"
            columns={columns}
            rows={data.products}
            rowKey={(p) => p.id}
            empty={
              <EmptyState title="No products yet." action={newProduct}>
                Add a product with its price and how it is delivered (license keys, files, or by hand); it is on sale in
                your store at once.
              </EmptyState>
            }
          />
        )}
      </Loaded>
    </>
  );
}
