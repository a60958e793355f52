import { zodResolver } from '@hookform/resolvers/zod';
import { ZCreateStoreInput } from '@svc/schemas';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useForm } from 'react-hook-form';
import type { z } from 'zod';
import { trpc } from '../../api';
import { storesQuery } from '../../store';
import { FormError } from '../../ui/form-error';
import { TextInput } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { buttonClass } from '../../ui/button';
import { AuthFrame } from '../auth/AuthFrame';

export function NewStore() {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const form = useForm<z.input<typeof ZCreateStoreInput>>({
    resolver: zodResolver(ZCreateStoreInput),
    defaultValues: { currency: 'USD' },
  });
  const create = useMutation(
    trpc.stores.create.mutationOptions({
      onSuccess: async (store) => {
        await queryClient.invalidateQueries({ queryKey: storesQuery.queryKey });
        await navigate({ to: '/stores/$storeId', params: { storeId: store.id } });
      },
    }),
  );
  return (
    <AuthFrame title="Create a store">
      <form noValidate onSubmit={onValid(form, (values) => create.mutate(values))}>
        <TextInput label="Store name" registration={form.register('name')} error={form.formState.errors.name} />
        <TextInput
          label="Subdomain"
          hint="Lowercase letters, digits and hyphens; your storefront's address."
          registration={form.register('subdomain')}
          error={form.formState.errors.subdomain}
        />
        <TextInput
          label="Currency"
          width="sm"
          hint="ISO 4217 code, such as USD or EUR."
          maxLength={3}
          registration={form.register('currency')}
          error={form.formState.errors.currency}
        />
        <FormError form={form} error={create.error} />
        <button type="submit" className={buttonClass('primary')} disabled={create.isPending}>
          Create store
        </button>
      </form>
      <p className="mb-0">
        <Link to="/">Back</Link>
      </p>
    </AuthFrame>
  );
}
