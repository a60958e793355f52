/**
 * Licenses (sold license keys), newest first, keyset-paged, filtered by product and status as the
 * API allows; the filters and the cursor live in the URL. Keys are shown masked, as the API gives them.
 */
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { trpc } from '../../api';
import { LICENSE_STATUSES, licensesRoute, type LicensesSearch } from '../../router';
import { useStoreId } from '../../store';
import { Loaded } from '../../ui/feedback';
import { formatDate, formatDateTime } from '../../ui/format';
import { DataTable } from '../../ui/table';

export function Licenses() {
  const storeId = useStoreId();
  const search = useSearch({ from: licensesRoute.id });
  const navigate = useNavigate({ from: licensesRoute.fullPath });
  const licenses = useQuery(
    trpc.licenses.dashboardList.queryOptions({
      storeId,
      ...(search.productId ? { productId: search.productId } : {}),
      ...(search.status ? { status: search.status } : {}),
      ...(search.cursor ? { cursor: search.cursor } : {}),
    }),
  );
  const products = useQuery(trpc.catalog.dashboardList.queryOptions({ storeId }));
  const productName = (id: string) => products.data?.products.find((p) => p.id === id)?.name ?? id;
  const filter = (next: Partial<LicensesSearch>) =>
    void navigate({ search: (prev) => ({ ...prev, ...next, cursor: undefined }) });
  return (
    <>
      <h1>Licenses</h1>
      <div className="toolbar">
        <div className="field">
          <label htmlFor="license-product">Product</label>
          <select
            id="license-product"
            value={search.productId ?? ''}
            onChange={(event) => filter({ productId: event.target.value || undefined })}
          >
            <option value="">All products</option>
            {(products.data?.products ?? [])
              .filter((p) => p.deliveryMethods.includes('licenseKeys') || p.id === search.productId)
              .map((product) => (
                <option key={product.id} value={product.id}>
                  {product.name}
                </option>
              ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="license-status">Status</label>
          <select
            id="license-status"
            value={search.status ?? ''}
            onChange={(event) => filter({ status: (event.target.value || undefined) as LicensesSearch['status'] })}
          >
            <option value="">Any status</option>
            {LICENSE_STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </div>
      </div>
      <Loaded query={licenses} label="Loading licenses…">
        {(page) => (
          <>
            <DataTable
              caption="Licenses"
              rows={page.licenses}
              rowKey={(license) => license.id}
              empty="No licenses match."
              columns={[
                {
                  header: 'Key',
                  cell: (license) => (
                    <Link
                      to="/stores/$storeId/licenses/$licenseId"
                      params={{ storeId, licenseId: license.id }}
                      aria-label={`License ${license.masked} of ${license.orderId}`}
                    >
                      <code>{license.masked}</code>
                    </Link>
                  ),
                },
                { header: 'Product', cell: (license) => productName(license.productId) },
                { header: 'Status', cell: (license) => license.status },
                {
                  header: 'Order',
                  cell: (license) => (
                    <Link to="/stores/$storeId/orders/$orderId" params={{ storeId, orderId: license.orderId }}>
                      {license.orderId}
                    </Link>
                  ),
                },
                { header: 'Customer', cell: (license) => license.customerEmail ?? '—' },
                {
                  header: 'Instances',
                  numeric: true,
                  cell: (license) =>
                    license.activationLimit === null
                      ? `${license.activationUsage}`
                      : `${license.activationUsage} of ${license.activationLimit}`,
                },
                { header: 'Expires', cell: (license) => (license.expiresAt ? formatDate(license.expiresAt) : 'Never') },
                { header: 'Created', cell: (license) => formatDateTime(license.createdAt) },
              ]}
            />
            <nav className="pager" aria-label="Pages">
              {search.cursor && (
                <Link from={licensesRoute.fullPath} search={(prev) => ({ ...prev, cursor: undefined })}>
                  First page
                </Link>
              )}
              {page.hasMore && page.nextCursor && (
                <Link
                  from={licensesRoute.fullPath}
                  search={(prev) => ({ ...prev, cursor: page.nextCursor ?? undefined })}
                >
                  Next page
                </Link>
              )}
            </nav>
          </>
        )}
      </Loaded>
    </>
  );
}
