/**
 * Staff: the store's owner and members with their permissions; invite a registered user by e-mail,
 * change a member's permissions, remove a member. The API lets only the owner do any of this (the
 * members procedures are owner-only, so staff cannot widen their own access): anyone else sees
 * what they themselves may do, and no controls.
 */
import { zodResolver } from '@hookform/resolvers/zod';
import { STORE_PERMISSIONS, ZAddMemberInput, ZUpdateMemberInput } from '@svc/schemas';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useForm, type FieldError } from 'react-hook-form';
import type { z } from 'zod';
import { trpc, type RouterOutputs } from '../../api';
import { useStore, useStoreId, type Permission } from '../../store';
import { ConfirmAction, FormDialog } from '../../ui/dialogs';
import { ErrorNote, Loaded } from '../../ui/feedback';
import { CheckboxGroup, TextInput } from '../../ui/fields';
import { formatDate } from '../../ui/format';
import { onValid } from '../../ui/forms';
import { DataTable } from '../../ui/table';
import { buttonClass } from '../../ui/button';
import { Card, PageHeader } from '../../ui/layout';

type Member = RouterOutputs['stores']['members']['members'][number];

const PERMISSION_LABELS: Record<Permission, string> = {
  viewOrders: 'View orders',
  editOrders: 'Edit orders',
  manageProducts: 'Manage products',
  manageSettings: 'Manage settings',
};
const permissionOptions = STORE_PERMISSIONS.map((value) => ({ value, label: PERMISSION_LABELS[value] }));

function permissionList(member: { role: string; permissions: readonly Permission[] }): string {
  if (member.role === 'owner') return 'All (owner)';
  return member.permissions.length ? member.permissions.map((p) => PERMISSION_LABELS[p]).join(', ') : 'None';
}

export function Staff() {
  const { store, isOwner } = useStore();
  return (
    <>
      <PageHeader title="Staff" description="Who may work in this store, and what each may do." />
      {isOwner ? (
        <OwnerStaff />
      ) : (
        store && (
          <>
            <p>Only the store’s owner can see, invite and remove staff, and change their permissions.</p>
            <dl className="facts">
              <dt>Your permissions</dt>
              <dd>{permissionList(store)}</dd>
            </dl>
          </>
        )
      )}
    </>
  );
}

function OwnerStaff() {
  const storeId = useStoreId();
  const members = useQuery(trpc.stores.members.queryOptions({ storeId }));
  return (
    <>
      <Loaded query={members} label="Loading staff…">
        {({ members: rows }) => (
          <DataTable
            caption="Members"
            rows={rows}
            rowKey={(member) => member.id}
            empty="No members."
            columns={[
              {
                header: 'Member',
                // The name the member gave on their Account page, when there is one, beside the e-mail.
                cell: (member) =>
                  member.name ? (
                    <>
                      {member.name} <span className="text-muted">{member.email}</span>
                    </>
                  ) : (
                    member.email
                  ),
              },
              { header: 'Role', cell: (member) => (member.role === 'owner' ? 'Owner' : 'Staff') },
              { header: 'Permissions', cell: permissionList },
              { header: 'Added', cell: (member) => formatDate(member.createdAt) },
              {
                header: 'Actions',
                cell: (member) => (member.role === 'owner' ? null : <MemberActions member={member} />),
              },
            ]}
          />
        )}
      </Loaded>
      <Invite />
    </>
  );
}

const ZInviteForm = ZAddMemberInput.omit({ storeId: true });

function Invite() {
  const storeId = useStoreId();
  const queryClient = useQueryClient();
  const form = useForm<z.input<typeof ZInviteForm>, unknown, z.output<typeof ZInviteForm>>({
    resolver: zodResolver(ZInviteForm),
    defaultValues: { email: '', permissions: ['viewOrders'] },
  });
  const add = useMutation(
    trpc.stores.addMember.mutationOptions({
      onSuccess: async () => {
        form.reset();
        await queryClient.invalidateQueries({ queryKey: trpc.stores.members.queryKey({ storeId }) });
      },
    }),
  );
  return (
    <Card id="invite-heading" title="Invite a member">
      <p className="muted">They need an svc account first: ask them to register with this e-mail address.</p>
      <form noValidate onSubmit={onValid(form, (values) => add.mutate({ storeId, ...values }))}>
        <TextInput
          label="Email"
          type="email"
          autoComplete="off"
          registration={form.register('email')}
          error={form.formState.errors.email}
        />
        <CheckboxGroup
          legend="Permissions"
          registration={form.register('permissions')}
          error={form.formState.errors.permissions as FieldError | undefined}
          options={permissionOptions}
        />
        <ErrorNote error={add.error} />
        <div className="actions">
          <button type="submit" className={buttonClass('primary')} disabled={add.isPending}>
            Invite
          </button>
          <p role="status" className="muted">
            {add.isSuccess && !form.formState.isDirty ? `${add.data.email} was added.` : ''}
          </p>
        </div>
      </form>
    </Card>
  );
}

function MemberActions({ member }: { member: Member }) {
  const storeId = useStoreId();
  const queryClient = useQueryClient();
  const remove = useMutation(
    trpc.stores.removeMember.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.stores.members.queryKey({ storeId }) }),
    }),
  );
  return (
    <div className="row-actions">
      <FormDialog
        trigger="Change permissions"
        triggerLabel={`Change permissions of ${member.email}`}
        title={`Permissions of ${member.email}`}
      >
        {(close) => <PermissionsForm member={member} onDone={close} />}
      </FormDialog>
      <ConfirmAction
        verb="Remove"
        triggerLabel={`Remove ${member.email}`}
        title={`Remove ${member.email}?`}
        onConfirm={() => remove.mutateAsync({ storeId, memberId: member.id })}
        pending={remove.isPending}
        error={remove.error}
      >
        <p>They lose access to this store at once. Their account stays.</p>
      </ConfirmAction>
    </div>
  );
}

const ZPermissionsForm = ZUpdateMemberInput.pick({ permissions: true });

function PermissionsForm({ member, onDone }: { member: Member; onDone: () => void }) {
  const storeId = useStoreId();
  const queryClient = useQueryClient();
  const form = useForm<z.input<typeof ZPermissionsForm>, unknown, z.output<typeof ZPermissionsForm>>({
    resolver: zodResolver(ZPermissionsForm),
    defaultValues: { permissions: member.permissions },
  });
  const change = useMutation(
    trpc.stores.updateMember.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries({ queryKey: trpc.stores.members.queryKey({ storeId }) });
        onDone();
      },
    }),
  );
  return (
    <form noValidate onSubmit={onValid(form, (values) => change.mutate({ storeId, memberId: member.id, ...values }))}>
      <CheckboxGroup
        legend="Permissions"
        registration={form.register('permissions')}
        error={form.formState.errors.permissions as FieldError | undefined}
        options={permissionOptions}
      />
      <ErrorNote error={change.error} />
      <div className="actions">
        <button type="button" className={buttonClass('secondary')} onClick={onDone}>
          Cancel
        </button>
        <button type="submit" className={buttonClass('primary')} disabled={change.isPending}>
          Save
        </button>
      </div>
    </form>
  );
}
