/**
 * Licenses (sold license keys), newest first, keyset-paged, filtered by product and status as the
 * API allows; the filters and the cursor live in the URL. Keys are shown masked, as the API gives
 * them. A whole key (what a buyer wrote in with) finds its sale: sent in a POST body, never put in
 * the URL, and cleared from the field once searched.
 */
import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useForm } from 'react-hook-form';
import { z } from 'zod';
import { trpc, type RouterOutputs } from '../../api';
import { useStoreId } from '../../store';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { TextInput } from '../../ui/fields';
import { formatDate, formatDateTime } from '../../ui/format';
import { onValid } from '../../ui/forms';
import { KeysetPager } from '../../ui/pager';
import { DataTable } from '../../ui/table';
import { LICENSE_STATUSES, type LicensesSearch } from './search';
import { buttonClass } from '../../ui/button';
import { Card, PageHeader } from '../../ui/layout';
import { StatusBadge } from '../../ui/badge';

const licensesRoute = getRouteApi('/app/stores/$storeId/licenses');

type License = RouterOutputs['licenses']['list']['licenses'][number];

/** The license table, the same for a page of the list and for the sales of a searched key. */
function LicenseTable({
  caption,
  licenses,
  empty,
  productName,
}: {
  caption: string;
  licenses: License[];
  empty: string;
  productName: (id: string) => string;
}) {
  const storeId = useStoreId();
  return (
    <DataTable
      caption={caption}
      rows={licenses}
      rowKey={(license) => license.id}
      empty={empty}
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
        { header: 'Status', cell: (license) => <StatusBadge kind="license" status={license.status} /> },
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
  );
}

const ZKeySearch = z.object({ key: z.string().trim().min(1, 'Type the whole key.').max(500) });

/** Finds the sales of one whole key; the field is emptied once the search is sent. */
function KeySearch({ productName }: { productName: (id: string) => string }) {
  const storeId = useStoreId();
  const form = useForm<z.infer<typeof ZKeySearch>>({ resolver: zodResolver(ZKeySearch), defaultValues: { key: '' } });
  const find = useMutation(trpc.licenses.dashboardFindByKey.mutationOptions());
  return (
    <Card id="key-search-title" title="Find by key">
      <form
        noValidate
        className="toolbar"
        aria-label="Find a license by its key"
        onSubmit={onValid(form, (values) => {
          find.mutate({ storeId, key: values.key });
          form.reset({ key: '' });
        })}
      >
        <TextInput
          label="Key"
          autoComplete="off"
          spellCheck={false}
          registration={form.register('key')}
          error={form.formState.errors.key}
          hint="The whole key, as the buyer has it. It is not kept or shown; the result shows it masked."
        />
        <button type="submit" className={buttonClass('secondary')} disabled={find.isPending}>
          Find
        </button>
        {find.data && (
          <button type="button" className={buttonClass('secondary')} onClick={() => find.reset()}>
            Clear
          </button>
        )}
      </form>
      <ErrorNote error={find.error} />
      {find.data && (
        <LicenseTable
          caption="Licenses with this key"
          licenses={find.data.licenses}
          empty="No sold license of this store has this key."
          productName={productName}
        />
      )}
    </Card>
  );
}

export function Licenses() {
  const storeId = useStoreId();
  const search = licensesRoute.useSearch();
  const navigate = licensesRoute.useNavigate();
  const licenses = useQuery(
    trpc.licenses.list.queryOptions({
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
      <PageHeader
        title="Licenses"
        description="Licenses sold with your products: look one up by its key, see its activations, disable it."
      />
      <KeySearch productName={productName} />
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
            <LicenseTable
              caption="Licenses"
              licenses={page.licenses}
              empty="No licenses match."
              productName={productName}
            />
            <KeysetPager from="/stores/$storeId/licenses" cursor={search.cursor} nextCursor={page.nextCursor} />
          </>
        )}
      </Loaded>
    </>
  );
}
