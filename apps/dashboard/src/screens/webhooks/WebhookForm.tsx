/** The endpoint form (create and edit): name, URL, the events it receives, and on edit whether it is enabled. */
import { zodResolver } from '@hookform/resolvers/zod';
import { WEBHOOK_EVENTS, ZCreateWebhookInput, ZUpdateWebhookInput } from '@svc/schemas';
import { useForm } from 'react-hook-form';
import type { z } from 'zod';
import { ErrorNote } from '../../ui/feedback';
import { TextInput } from '../../ui/fields';
import { onValid } from '../../ui/forms';
import { buttonClass } from '../../ui/button';

const ZCreateForm = ZCreateWebhookInput.omit({ storeId: true });
const ZEditForm = ZUpdateWebhookInput.omit({ storeId: true, webhookId: true }).required({
  name: true,
  url: true,
  events: true,
});
export type WebhookFormValues = z.output<typeof ZEditForm>;

export function WebhookForm({
  initial,
  submitLabel,
  onSubmit,
  pending,
  error,
  close,
}: {
  /** Given: an edit, with the `Enabled` checkbox. */
  initial?: WebhookFormValues;
  submitLabel: string;
  onSubmit: (values: WebhookFormValues) => void;
  pending: boolean;
  error: unknown;
  close: () => void;
}) {
  const form = useForm<z.input<typeof ZEditForm>, unknown, WebhookFormValues>({
    resolver: zodResolver(initial ? ZEditForm : ZCreateForm.extend({ enabled: ZEditForm.shape.enabled })),
    defaultValues: initial ?? { name: '', url: '', events: [], enabled: true },
  });
  const errors = form.formState.errors;
  return (
    <form noValidate onSubmit={onValid(form, onSubmit)}>
      <TextInput label="Name" registration={form.register('name')} error={errors.name} />
      <TextInput
        label="URL"
        type="url"
        hint="Where svc POSTs each event (https; http only to this machine outside production)."
        registration={form.register('url')}
        error={errors.url}
      />
      <fieldset className="field" aria-describedby={errors.events ? 'webhook-events-error' : undefined}>
        <legend>Events</legend>
        {WEBHOOK_EVENTS.map((event) => (
          <label key={event} className="check">
            <input type="checkbox" value={event} {...form.register('events')} /> <code>{event}</code>
          </label>
        ))}
        {errors.events && (
          <span id="webhook-events-error" className="field-error">
            Choose at least one event.
          </span>
        )}
      </fieldset>
      {initial && (
        <label className="check field">
          <input type="checkbox" {...form.register('enabled')} /> Enabled
        </label>
      )}
      <ErrorNote error={error} />
      <div className="actions">
        <button type="submit" className={buttonClass('primary')} disabled={pending}>
          {submitLabel}
        </button>
        <button type="button" className={buttonClass('secondary')} onClick={close}>
          Cancel
        </button>
      </div>
    </form>
  );
}
