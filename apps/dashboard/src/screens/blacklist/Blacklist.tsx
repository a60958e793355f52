/**
 * Blacklist: the e-mails, IP addresses and countries the store refuses orders from. Entries are
 * added and removed (`Delete`); the API has no update, so changing one is removing it and adding
 * the new value. Every blacklist procedure needs manageSettings.
 */
import { zodResolver } from '@hookform/resolvers/zod';
import { ZCreateBlacklistEntryInput, type TBlacklistKind } from '@svc/schemas';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import type { z } from 'zod';
import { trpc, type RouterOutputs } from '../../api';
import { useStore, useStoreId } from '../../store';
import { ConfirmAction } from '../../ui/dialogs';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { SelectInput, TextInput } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { formatDateTime } from '../../ui/format';
import { DataTable } from '../../ui/table';
import { buttonClass } from '../../ui/button';
import { Card, PageHeader } from '../../ui/layout';

type Entry = RouterOutputs['blacklist']['list']['entries'][number];

const ZEntryForm = ZCreateBlacklistEntryInput.omit({ storeId: true });
type EntryForm = z.input<typeof ZEntryForm>;

const KIND_LABELS: Record<TBlacklistKind, string> = {
  email: 'E-mail address',
  ip: 'IP address',
  country: 'Country',
};
const KIND_OPTIONS = (Object.keys(KIND_LABELS) as TBlacklistKind[]).map((kind) => ({
  value: kind,
  label: KIND_LABELS[kind],
}));

function useRefreshBlacklist() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: trpc.blacklist.list.queryKey() });
}

function AddEntry() {
  const storeId = useStoreId();
  const refresh = useRefreshBlacklist();
  const form = useForm<EntryForm, unknown, z.output<typeof ZEntryForm>>({
    resolver: zodResolver(ZEntryForm),
    defaultValues: { kind: 'email', value: '', note: '' },
  });
  const add = useMutation(
    trpc.blacklist.add.mutationOptions({
      onSuccess: async () => {
        form.reset({ kind: form.getValues('kind'), value: '', note: '' });
        await refresh();
      },
    }),
  );
  const errors = form.formState.errors;
  return (
    <Card id="blacklist-add" title="Add an entry">
      <form
        noValidate
        onSubmit={onValid(form, (values) => add.mutate({ storeId, ...values, note: values.note || undefined }))}
      >
        <div className="toolbar">
          <SelectInput label="Type" options={KIND_OPTIONS} registration={form.register('kind')} error={errors.kind} />
          <TextInput
            label="Value"
            hint="An e-mail address, an IPv4 or IPv6 address, or a two-letter country code."
            autoComplete="off"
            registration={form.register('value')}
            error={errors.value}
          />
          <TextInput label="Note" hint="Optional; for you." registration={form.register('note')} error={errors.note} />
        </div>
        <ErrorNote error={add.error} />
        <button type="submit" className={buttonClass('primary')} disabled={add.isPending}>
          Add to blacklist
        </button>
      </form>
    </Card>
  );
}

function RemoveEntry({ entry }: { entry: Entry }) {
  const storeId = useStoreId();
  const refresh = useRefreshBlacklist();
  const remove = useMutation(trpc.blacklist.remove.mutationOptions({ onSuccess: refresh }));
  return (
    <ConfirmAction
      verb="Delete"
      triggerLabel={`Delete ${entry.value}`}
      title={`Remove ${entry.value} from the blacklist?`}
      pending={remove.isPending}
      error={remove.error}
      onConfirm={() => remove.mutateAsync({ storeId, entryId: entry.id })}
    >
      <p>Orders from this {KIND_LABELS[entry.kind].toLowerCase()} are taken again.</p>
    </ConfirmAction>
  );
}

export function Blacklist() {
  const storeId = useStoreId();
  const { store, can } = useStore();
  const allowed = can('manageSettings');
  const entries = useQuery(trpc.blacklist.list.queryOptions({ storeId }, { enabled: allowed }));
  if (store && !allowed) {
    return (
      <>
        <PageHeader title="Blacklist" description="E-mail addresses, IPs and countries that may not buy." />
        <p>The blacklist needs the manageSettings permission, which you do not have in this store.</p>
      </>
    );
  }
  return (
    <>
      <PageHeader title="Blacklist" description="E-mail addresses, IPs and countries that may not buy." />
      <p className="muted">
        Orders from these e-mail addresses, IP addresses and countries are refused. To change an entry, delete it and
        add the new value.
      </p>
      <Loaded query={entries} label="Loading the blacklist…">
        {(data) => (
          <DataTable<Entry>
            caption="Blacklist"
            rows={data.entries}
            rowKey={(entry) => entry.id}
            empty="Nobody is blacklisted."
            columns={[
              { header: 'Type', cell: (entry) => KIND_LABELS[entry.kind] },
              { header: 'Value', cell: (entry) => entry.value },
              { header: 'Note', cell: (entry) => entry.note || '—' },
              { header: 'Added', cell: (entry) => formatDateTime(entry.createdAt) },
              { header: 'Actions', cell: (entry) => <RemoveEntry entry={entry} /> },
            ]}
          />
        )}
      </Loaded>
      <AddEntry />
    </>
  );
}
