/**
 * A keyed product's license keys: import (pasted, or a text file read in the browser), the masked
 * list with the stock counts, and deleting an unsold key.
 */
import { IMPORT_KEYS_MAX, ZImportKeysInput } from '@svc/schemas';
import { useMutation, useQueries, useQueryClient } from '@tanstack/react-query';
import { useId, useRef, useState, type FormEvent } from 'react';
import { trpc, type RouterOutputs } from '../../api';
import { StatusBadge } from '../../ui/badge';
import { ConfirmDialog } from '../../ui/dialogs';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { formatDateTime } from '../../ui/format';
import { DataTable, type ColumnDef } from '../../ui/table';
import { buttonClass } from '../../ui/button';
import { Card } from '../../ui/layout';
import { ActionMenu } from '../../ui/menu';

type Key = RouterOutputs['catalog']['dashboardKeys']['keys'][number];

/** The most keys one import takes here (a file of up to this many lines). */
const MAX_KEYS = 10_000;
/** Each call's JSON stays well under the server's body limit (1 MiB by default). */
const BATCH_BYTES = 512 * 1024;
const KEY_SCHEMA = ZImportKeysInput.shape.keys.element;
const STATUS_LABELS: Record<Key['status'], string> = { available: 'Available', assigned: 'Sold', revoked: 'Revoked' };

/** One key a line; blank lines dropped; a key too long for the API is an error naming its line. */
export function keysOf(text: string): { keys: string[]; error?: string } {
  const keys: string[] = [];
  const lines = text.split(/\r\n|\r|\n/);
  for (const [index, line] of lines.entries()) {
    const key = line.trim();
    if (!key) continue;
    if (!KEY_SCHEMA.safeParse(key).success) return { keys, error: `Line ${index + 1} is too long for a key.` };
    keys.push(key);
  }
  return { keys };
}

/** Calls of at most the API's key count and BATCH_BYTES of JSON each. */
export function batchesOf(keys: string[]): string[][] {
  const batches: string[][] = [];
  let batch: string[] = [];
  let bytes = 0;
  const encoder = new TextEncoder();
  for (const key of keys) {
    const size = encoder.encode(JSON.stringify(key)).length + 1;
    if (batch.length > 0 && (batch.length >= IMPORT_KEYS_MAX || bytes + size > BATCH_BYTES)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(key);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

function ImportKeys({ storeId, productId }: { storeId: string; productId: string }) {
  const queryClient = useQueryClient();
  const id = useId();
  const fileInput = useRef<HTMLInputElement>(null);
  const [text, setText] = useState('');
  const [status, setStatus] = useState('');
  const [problem, setProblem] = useState('');
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const importKeys = useMutation(trpc.catalog.dashboardImportKeys.mutationOptions());

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (busy) return;
    setStatus('');
    setProblem('');
    setFailure(null);
    const file = fileInput.current?.files?.[0];
    if (file && file.size > MAX_KEYS * 1024) {
      setProblem('That file is too large for 10,000 keys.');
      return;
    }
    const source = [file ? await file.text() : '', text].join('\n');
    const { keys, error } = keysOf(source);
    if (error) return setProblem(error);
    if (keys.length === 0) return setProblem('Paste keys (one a line) or choose a text file.');
    if (keys.length > MAX_KEYS)
      return setProblem(`At most 10,000 keys at a time; this has ${keys.length}. Split it into several imports.`);

    setBusy(true);
    let added = 0;
    let duplicates = 0;
    const batches = batchesOf(keys);
    try {
      for (const [index, batch] of batches.entries()) {
        if (batches.length > 1) setStatus(`Importing: part ${index + 1} of ${batches.length}…`);
        const result = await importKeys.mutateAsync({ storeId, productId, keys: batch });
        added += result.added;
        duplicates += result.duplicates;
      }
      setStatus(`${added} added, ${duplicates} ${duplicates === 1 ? 'duplicate' : 'duplicates'} skipped.`);
      setText('');
      if (fileInput.current) fileInput.current.value = '';
    } catch (error) {
      setFailure(error);
      setStatus(added + duplicates > 0 ? `Stopped: ${added} added, ${duplicates} duplicates before the error.` : '');
    } finally {
      setBusy(false);
      await Promise.all([
        queryClient.invalidateQueries(trpc.catalog.dashboardKeys.pathFilter()),
        queryClient.invalidateQueries(trpc.catalog.get.queryFilter({ storeId, productId })),
        queryClient.invalidateQueries(trpc.catalog.dashboardList.pathFilter()),
      ]);
    }
  };

  return (
    <form noValidate onSubmit={(event) => void submit(event)} aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} className="m-0 mb-3">
        Import keys
      </h3>
      <div className="field">
        <label htmlFor={`${id}-text`}>Keys, one a line</label>
        <textarea
          id={`${id}-text`}
          value={text}
          onChange={(event) => setText(event.target.value)}
          aria-describedby={`${id}-hint`}
        />
        <span id={`${id}-hint`} className="hint">
          Up to 10,000 keys; duplicates (here or in stock) are skipped.
        </span>
      </div>
      <div className="field">
        <label htmlFor={`${id}-file`}>Or a text file of keys</label>
        <input id={`${id}-file`} type="file" accept=".txt,.csv,text/plain" ref={fileInput} />
      </div>
      {problem && (
        <p role="alert" className="field-error">
          {problem}
        </p>
      )}
      <ErrorNote error={failure} />
      <button type="submit" className={buttonClass('primary')} disabled={busy}>
        Import keys
      </button>
      <p role="status">{status}</p>
    </form>
  );
}

/** A key row's actions: a menu (no red button on every row); Delete asks in a dialog that repeats the verb. */
function KeyActions({ storeId, productId, keyRow }: { storeId: string; productId: string; keyRow: Key }) {
  const queryClient = useQueryClient();
  const [deleting, setDeleting] = useState(false);
  const remove = useMutation(
    trpc.catalog.deleteKey.mutationOptions({
      onSuccess: async () => {
        await Promise.all([
          queryClient.invalidateQueries(trpc.catalog.dashboardKeys.pathFilter()),
          queryClient.invalidateQueries(trpc.catalog.get.queryFilter({ storeId, productId })),
          queryClient.invalidateQueries(trpc.catalog.dashboardList.pathFilter()),
        ]);
      },
    }),
  );
  return (
    <>
      <ActionMenu
        quiet
        label={`Actions for key ${keyRow.masked}`}
        items={[{ id: 'delete', label: 'Delete', destructive: true, onAction: () => setDeleting(true) }]}
      />
      <ConfirmDialog
        verb="Delete"
        title="Delete this key?"
        isOpen={deleting}
        onOpenChange={setDeleting}
        pending={remove.isPending}
        error={remove.error}
        onConfirm={() => remove.mutateAsync({ storeId, productId, keyId: keyRow.id })}
      >
        <p>
          The key <code>{keyRow.masked}</code> leaves your stock; it cannot be sold afterwards.
        </p>
      </ConfirmDialog>
    </>
  );
}

export function LicenseKeys({ storeId, productId }: { storeId: string; productId: string }) {
  // Pages shown so far, by their cursors (the API's input is strict: no infinite query's `direction`).
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const pages = useQueries({
    queries: cursors.map((cursor) =>
      trpc.catalog.dashboardKeys.queryOptions({ storeId, productId, limit: 50, ...(cursor ? { cursor } : {}) }),
    ),
    combine: (results) => ({
      data: results.every((r) => r.data) ? results.map((r) => r.data!) : undefined,
      error: results.find((r) => r.error)?.error ?? null,
      isPending: results.some((r) => r.isPending),
      isFetching: results.some((r) => r.isFetching),
      refetch: () => Promise.all(results.map((r) => r.refetch())),
    }),
  });
  const last = pages.data?.[pages.data.length - 1];
  const columns: ColumnDef<Key>[] = [
    { header: 'Key', cell: (k) => <code>{k.masked}</code> },
    { header: 'Status', cell: (k) => <StatusBadge kind="key" status={k.status} label={STATUS_LABELS[k.status]} /> },
    { header: 'Added', cell: (k) => formatDateTime(k.createdAt) },
    { header: 'Sold', cell: (k) => formatDateTime(k.assignedAt) },
    {
      header: 'Actions',
      cell: (k) =>
        k.status === 'available' ? <KeyActions storeId={storeId} productId={productId} keyRow={k} /> : null,
    },
  ];
  return (
    <Card id="license-keys" title="License keys">
      <Loaded query={pages} label="Loading keys…">
        {(shown) => {
          const counts = shown[0]?.counts ?? { available: 0, assigned: 0, revoked: 0 };
          return (
            <>
              <h3 className="m-0 mb-2">Stock</h3>
              <dl className="facts mb-4">
                <dt>Available</dt>
                <dd>{counts.available}</dd>
                <dt>Sold</dt>
                <dd>{counts.assigned}</dd>
                <dt>Revoked</dt>
                <dd>{counts.revoked}</dd>
              </dl>
              <DataTable
                caption="License keys"
                columns={columns}
                rows={shown.flatMap((page) => page.keys)}
                rowKey={(k) => k.id}
                empty="No keys yet."
              />
              {last?.nextCursor && (
                <div className="pager">
                  <button
                    type="button"
                    className={buttonClass('secondary')}
                    disabled={pages.isFetching}
                    onClick={() => setCursors((shown) => [...shown, last.nextCursor ?? undefined])}
                  >
                    Show more keys
                  </button>
                </div>
              )}
            </>
          );
        }}
      </Loaded>
      <div className="mt-6 border-t border-line pt-4">
        <ImportKeys storeId={storeId} productId={productId} />
      </div>
    </Card>
  );
}
