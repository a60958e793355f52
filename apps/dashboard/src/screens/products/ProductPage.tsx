import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { trpc } from '../../api';
import { useStore } from '../../store';
import { StatusBadge } from '../../ui/badge';
import { ConfirmDialog } from '../../ui/dialogs';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { formatDateTime, formatMoney } from '../../ui/format';
import { Card, PageHeader, Stack } from '../../ui/layout';
import { ActionMenu } from '../../ui/menu';
import { LicenseKeys } from './LicenseKeys';
import { ProductFiles } from './ProductFiles';
import { ProductImages } from './ProductImages';
import { ProductPlans } from './ProductPlans';
import { DELIVERY_LABELS, ProductForm, STATUS_LABELS, TAX_CATEGORY_LABELS, type ProductBody } from './ProductForm';
import { stockText } from './Products';
import { buttonClass } from '../../ui/button';

const productRoute = getRouteApi('/app/stores/$storeId/products/$productId');

export function ProductPage() {
  const { storeId, productId } = productRoute.useParams();
  const { can } = useStore();
  const manage = can('manageProducts');
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [saved, setSaved] = useState('');
  const [deleting, setDeleting] = useState(false);
  const product = useQuery(trpc.catalog.get.queryOptions({ storeId, productId }));

  const changed = async () => {
    await Promise.all([
      queryClient.invalidateQueries(trpc.catalog.get.queryFilter({ storeId, productId })),
      queryClient.invalidateQueries(trpc.catalog.dashboardList.pathFilter()),
    ]);
  };
  const update = useMutation(
    trpc.catalog.update.mutationOptions({
      onMutate: () => setSaved(''),
      onSuccess: async () => {
        await changed();
        setSaved('Saved.');
      },
    }),
  );
  const archive = useMutation(
    trpc.catalog.update.mutationOptions({
      onMutate: () => setSaved(''),
      onSuccess: async () => {
        await changed();
        setSaved('Archived: it is no longer sold.');
      },
    }),
  );
  const remove = useMutation(
    trpc.catalog.delete.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries(trpc.catalog.dashboardList.pathFilter());
        await navigate({ to: '/stores/$storeId/products', params: { storeId } });
      },
    }),
  );

  return (
    <Loaded query={product} label="Loading the product…">
      {(p) => {
        const initial: ProductBody = {
          name: p.name,
          slug: p.slug,
          price: p.price,
          description: p.description,
          status: p.status,
          deliveryMethods: p.deliveryMethods,
          deliveryInstructions: p.deliveryInstructions,
          customFields: p.customFields,
          minQuantity: p.minQuantity,
          maxQuantity: p.maxQuantity,
          licenseActivationLimit: p.licenseActivationLimit,
          licenseValidityDays: p.licenseValidityDays,
          plans: p.plans,
          taxCategory: p.taxCategory,
        };
        const summary = (
          <Card id="product-summary" title="Summary">
            <dl className="facts">
              <dt>Status</dt>
              <dd>{STATUS_LABELS[p.status]}</dd>
              <dt>Price</dt>
              <dd>{formatMoney(p.price, p.currency)}</dd>
              <dt>Delivery</dt>
              <dd>{p.deliveryMethods.map((m) => DELIVERY_LABELS[m]).join(', ')}</dd>
              <dt>Tax category</dt>
              <dd>{TAX_CATEGORY_LABELS[p.taxCategory]}</dd>
              <dt>Stock</dt>
              <dd>{stockText(p)}</dd>
            </dl>
          </Card>
        );
        return (
          <>
            <PageHeader
              back={
                <Link to="/stores/$storeId/products" params={{ storeId }}>
                  ← Products
                </Link>
              }
              title={p.name}
              badge={<StatusBadge kind="product" status={p.status} label={STATUS_LABELS[p.status]} />}
              description={`Updated ${formatDateTime(p.updatedAt)}`}
              actions={
                manage && (
                  <>
                    {p.status !== 'archived' && (
                      <button
                        type="button"
                        className={buttonClass('secondary')}
                        disabled={archive.isPending}
                        onClick={() => archive.mutate({ storeId, productId, status: 'archived' })}
                      >
                        Archive
                      </button>
                    )}
                    <ActionMenu
                      label="More actions"
                      items={[{ id: 'delete', label: 'Delete', destructive: true, onAction: () => setDeleting(true) }]}
                    />
                    <ConfirmDialog
                      verb="Delete"
                      title={`Delete ${p.name}?`}
                      isOpen={deleting}
                      onOpenChange={setDeleting}
                      pending={remove.isPending}
                      error={remove.error}
                      onConfirm={() => remove.mutateAsync({ storeId, productId })}
                    >
                      <p>
                        It leaves your product list and the storefront for good. Orders that include it keep naming it,
                        and keys already sold stay with their buyers.
                      </p>
                    </ConfirmDialog>
                  </>
                )
              }
            />
            <ErrorNote error={archive.error} />
            <p role="status" className="m-0 text-sm empty:hidden">
              {saved}
            </p>

            <div className="grid min-w-0 gap-6 lg:grid-cols-[minmax(0,1fr)_18rem]">
              <Stack>
                {p.plans.length > 0 && <ProductPlans storeId={storeId} product={p} showCounts={can('viewOrders')} />}
                {manage && (
                  <Card id="edit-product" title="Edit product">
                    <ProductForm
                      // A new form when the saved product changes, so it shows what was saved.
                      key={p.updatedAt}
                      initial={initial}
                      currency={p.currency}
                      submitLabel="Save changes"
                      pending={update.isPending}
                      error={update.error}
                      onSubmit={(values) => update.mutate({ ...values, storeId, productId })}
                    />
                  </Card>
                )}
                {!manage && p.description && (
                  <Card id="product-description" title="Description">
                    <p className="m-0 whitespace-pre-wrap">{p.description}</p>
                  </Card>
                )}
                <ProductImages product={p} manage={manage} />
                {p.deliveryMethods.includes('downloadFiles') && (
                  <ProductFiles storeId={storeId} productId={productId} manage={manage} />
                )}
                {p.deliveryMethods.includes('licenseKeys') && manage && (
                  <LicenseKeys storeId={storeId} productId={productId} />
                )}
              </Stack>
              <Stack className="order-first lg:order-none">{summary}</Stack>
            </div>
          </>
        );
      }}
    </Loaded>
  );
}
