/** A download product's files: the list, an upload with its progress, and deleting a file. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId } from 'react';
import { trpc, type RouterOutputs } from '../../api';
import { ConfirmAction } from '../../ui/dialogs';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { formatBytes, formatDateTime } from '../../ui/format';
import { DataTable, type ColumnDef } from '../../ui/table';
import { UploadField, useUpload } from '../../ui/upload';
import { buttonClass } from '../../ui/button';
import { Card } from '../../ui/layout';

type StoredFile = RouterOutputs['catalog']['files']['files'][number];

function UploadFile({ storeId, productId }: { storeId: string; productId: string }) {
  const queryClient = useQueryClient();
  const id = useId();
  const { input, progress, status, problem, upload, submit } = useUpload({
    url: `/api/dashboard/stores/${encodeURIComponent(storeId)}/products/${encodeURIComponent(productId)}/files`,
    empty: 'Choose a file first.',
    onDone: () => queryClient.invalidateQueries(trpc.catalog.files.queryFilter({ storeId, productId })),
  });
  return (
    <form noValidate onSubmit={submit} aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>Upload a file</h3>
      <UploadField id={id} label="File" input={input} problem={problem} progress={progress} />
      <ErrorNote error={upload.error} />
      <button type="submit" className={buttonClass('primary')} disabled={upload.isPending}>
        Upload
      </button>
      <p role="status">{status}</p>
    </form>
  );
}

function DeleteFile({ storeId, productId, file }: { storeId: string; productId: string; file: StoredFile }) {
  const queryClient = useQueryClient();
  const remove = useMutation(
    trpc.catalog.deleteFile.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries(trpc.catalog.files.queryFilter({ storeId, productId })),
    }),
  );
  return (
    <ConfirmAction
      verb="Delete"
      triggerLabel={`Delete ${file.name}`}
      title={`Delete ${file.name}?`}
      pending={remove.isPending}
      error={remove.error}
      onConfirm={() => remove.mutateAsync({ storeId, productId, fileId: file.id })}
    >
      <p>Buyers will no longer be able to download it.</p>
    </ConfirmAction>
  );
}

export function ProductFiles({ storeId, productId, manage }: { storeId: string; productId: string; manage: boolean }) {
  const files = useQuery(trpc.catalog.files.queryOptions({ storeId, productId }));
  const columns: ColumnDef<StoredFile>[] = [
    { header: 'Name', cell: (f) => f.name },
    { header: 'Type', cell: (f) => f.contentType },
    { header: 'Size', numeric: true, cell: (f) => formatBytes(f.size) },
    { header: 'Uploaded', cell: (f) => formatDateTime(f.createdAt) },
    ...(manage
      ? [
          {
            header: 'Actions',
            cell: (f: StoredFile) => <DeleteFile storeId={storeId} productId={productId} file={f} />,
          },
        ]
      : []),
  ];
  return (
    <Card id="product-files" title="Files">
      <Loaded query={files} label="Loading files…">
        {(data) => (
          <DataTable caption="Files" columns={columns} rows={data.files} rowKey={(f) => f.id} empty="No files yet." />
        )}
      </Loaded>
      {manage && <UploadFile storeId={storeId} productId={productId} />}
    </Card>
  );
}
