/** One license: its facts, its active instances (remove one), and `Disable` / `Enable`. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { trpc } from '../../api';
import { useStore, useStoreId } from '../../store';
import { ConfirmAction } from '../../ui/dialogs';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { formatDate, formatDateTime } from '../../ui/format';
import { DataTable } from '../../ui/table';
import { buttonClass } from '../../ui/button';
import { StatusBadge } from '../../ui/badge';

const licenseRoute = getRouteApi('/app/stores/$storeId/licenses/$licenseId');

export function LicensePage() {
  const storeId = useStoreId();
  const { licenseId } = licenseRoute.useParams();
  const { can } = useStore();
  const queryClient = useQueryClient();
  const ref = { storeId, licenseId };
  const license = useQuery(trpc.licenses.get.queryOptions(ref));
  const changed = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.licenses.get.queryKey(ref) }),
      queryClient.invalidateQueries({ queryKey: trpc.licenses.list.queryKey() }),
    ]);
  const disable = useMutation(trpc.licenses.disable.mutationOptions({ onSuccess: changed }));
  const enable = useMutation(trpc.licenses.enable.mutationOptions({ onSuccess: changed }));
  const remove = useMutation(trpc.licenses.removeInstance.mutationOptions({ onSuccess: changed }));
  const editable = can('editOrders');
  return (
    <>
      <p>
        <Link to="/stores/$storeId/licenses" params={{ storeId }} search={{}}>
          Licenses
        </Link>
      </p>
      <Loaded query={license} label="Loading the license…">
        {(data) => (
          <>
            <h1>
              License <code>{data.masked}</code>
            </h1>
            <dl className="facts">
              <dt>Status</dt>
              <dd>
                <StatusBadge kind="license" status={data.status} />
              </dd>
              <dt>Order</dt>
              <dd>
                <Link to="/stores/$storeId/orders/$orderId" params={{ storeId, orderId: data.orderId }}>
                  {data.orderId}
                </Link>
              </dd>
              <dt>Customer</dt>
              <dd>{data.customerEmail ?? '—'}</dd>
              <dt>Product id</dt>
              <dd>
                <code>{data.productId}</code>
              </dd>
              <dt>Instances</dt>
              <dd>
                {data.activationLimit === null
                  ? `${data.activationUsage} (no limit)`
                  : `${data.activationUsage} of ${data.activationLimit}`}
              </dd>
              <dt>Expires</dt>
              <dd>{data.expiresAt ? formatDate(data.expiresAt) : 'Never'}</dd>
              <dt>Created</dt>
              <dd>{formatDateTime(data.createdAt)}</dd>
            </dl>
            {editable && (
              <div className="actions">
                {data.status === 'disabled' ? (
                  <button
                    type="button"
                    className={buttonClass('primary')}
                    disabled={enable.isPending}
                    onClick={() => enable.mutate(ref)}
                  >
                    Enable
                  </button>
                ) : (
                  <ConfirmAction
                    verb="Disable"
                    title="Disable this license?"
                    onConfirm={() => disable.mutateAsync(ref)}
                    pending={disable.isPending}
                    error={disable.error}
                  >
                    <p>The License API will answer that it is disabled, for every instance, until you enable it.</p>
                  </ConfirmAction>
                )}
              </div>
            )}
            <ErrorNote error={enable.error} />
            <h2>Instances</h2>
            <DataTable
              caption="Instances"
              rows={data.instances}
              rowKey={(instance) => instance.id}
              empty="No active instances."
              columns={[
                { header: 'Name', cell: (instance) => instance.name },
                { header: 'Id', cell: (instance) => <code>{instance.id}</code> },
                { header: 'Created', cell: (instance) => formatDateTime(instance.createdAt) },
                ...(editable
                  ? [
                      {
                        header: 'Actions',
                        cell: (instance: (typeof data.instances)[number]) => (
                          <ConfirmAction
                            verb="Remove"
                            title={`Remove the instance "${instance.name}"?`}
                            triggerLabel={`Remove ${instance.name}`}
                            onConfirm={() => remove.mutateAsync({ ...ref, instanceId: instance.id })}
                            pending={remove.isPending}
                            error={remove.error}
                          >
                            <p>It stops validating; the software on it has to activate again.</p>
                          </ConfirmAction>
                        ),
                      },
                    ]
                  : []),
              ]}
            />
          </>
        )}
      </Loaded>
    </>
  );
}
