import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { trpc, type RouterOutputs } from '../../api';
import { useStore, useStoreId } from '../../store';
import { Loaded } from '../../ui/feedback';
import { formatMoney } from '../../ui/format';
import { DataTable, type ColumnDef } from '../../ui/table';
import { DELIVERY_LABELS, STATUS_LABELS } from './ProductForm';

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
    { header: 'Status', cell: (p) => STATUS_LABELS[p.status] },
    { header: 'Price', numeric: true, cell: (p) => formatMoney(p.price, p.currency) },
    { header: 'Delivery', cell: (p) => p.deliveryMethods.map((m) => DELIVERY_LABELS[m]).join(', ') },
    { header: 'Stock', numeric: true, cell: stockText },
  ];
  return (
    <>
      <h1>Products</h1>
      {can('manageProducts') && (
        <div className="actions">
          <Link to="/stores/$storeId/products/new" params={{ storeId }} className="button primary">
            New product
          </Link>
        </div>
      )}
      <Loaded query={products} label="Loading products…">
        {(data) => (
          <DataTable
            caption="Products"
            columns={columns}
            rows={data.products}
            rowKey={(p) => p.id}
            empty="No products yet."
          />
        )}
      </Loaded>
    </>
  );
}
