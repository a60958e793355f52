/**
 * A form's answer from the server, spoken at the fields: each of the error's `issues` whose path
 * names a field of the form is set on that field (so it shows under it, with aria-invalid and
 * aria-describedby, like the form's own checks); the message, and any issue no field owns, stay in
 * the note above the form's buttons.
 */
import { useEffect } from 'react';
import type { FieldValues, Path, UseFormReturn } from 'react-hook-form';
import { apiFailure } from '../api';
import { ErrorNote } from './feedback';

/**
 * The form field a server path names: the whole path, else its shortest tail that is a field of
 * the form (`settings.tax.sellerName` → `tax.sellerName`, `settings.receiptNote` → `receiptNote`).
 */
export function fieldOfPath(path: string, values: Record<string, unknown>): string | undefined {
  if (!path) return undefined;
  const parts = path.split('.');
  const holds = (from: number) => {
    let value: unknown = values;
    for (const part of parts.slice(from))
      value = value && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
    return value !== undefined;
  };
  for (let from = 0; from < parts.length; from++) if (holds(from)) return parts.slice(from).join('.');
  return undefined;
}

export function FormError<T extends FieldValues, C, O extends FieldValues>({
  form,
  error,
}: {
  form: UseFormReturn<T, C, O>;
  error: unknown;
}) {
  const failure = error ? apiFailure(error) : undefined;
  const values = form.getValues() as Record<string, unknown>;
  const placed = new Set<string>();
  const rest: Array<{ path: string; message: string }> = [];
  for (const issue of failure?.issues ?? []) {
    const field = fieldOfPath(issue.path, values);
    if (field) placed.add(`${field}\u0000${issue.message}`);
    else rest.push(issue);
  }
  const key = [...placed].join('\u0001');
  useEffect(() => {
    for (const entry of key ? key.split('\u0001') : []) {
      const [field, message] = entry.split('\u0000') as [string, string];
      form.setError(field as Path<T>, { type: 'server', message }, { shouldFocus: false });
    }
  }, [key, form]);
  if (!failure) return null;
  return <ErrorNote error={error} issues={rest} />;
}
