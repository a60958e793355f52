/**
 * Form fields for react-hook-form: a native control with its <label>, its error tied to it
 * (aria-invalid, aria-describedby) and shown under it. Native controls are the accessible default;
 * React Aria is used where the platform has no widget (dialogs, tables).
 */
import {
  useId,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
} from 'react';
import type { FieldError, UseFormRegisterReturn } from 'react-hook-form';

/** What `register()` binds; every other attribute of the control may be passed. */
type Bound = 'name' | 'onChange' | 'onBlur' | 'ref';

interface Common {
  label: string;
  registration: UseFormRegisterReturn;
  error?: FieldError | undefined;
  hint?: ReactNode;
}

function describedBy(id: string, error: unknown, hint: unknown): string | undefined {
  const ids = [error ? `${id}-error` : '', hint ? `${id}-hint` : ''].filter(Boolean);
  return ids.length ? ids.join(' ') : undefined;
}

function Below({ id, error, hint }: { id: string; error?: FieldError | undefined; hint?: ReactNode }) {
  return (
    <>
      {hint && (
        <span id={`${id}-hint`} className="hint">
          {hint}
        </span>
      )}
      {error && (
        <span id={`${id}-error`} className="field-error">
          {error.message}
        </span>
      )}
    </>
  );
}

export function TextInput({
  label,
  registration,
  error,
  hint,
  ...rest
}: Common & Omit<InputHTMLAttributes<HTMLInputElement>, Bound>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, error, hint)}
        {...rest}
        {...registration}
      />
      <Below id={id} error={error} hint={hint} />
    </div>
  );
}

export function TextArea({
  label,
  registration,
  error,
  hint,
  ...rest
}: Common & Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, Bound>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, error, hint)}
        {...rest}
        {...registration}
      />
      <Below id={id} error={error} hint={hint} />
    </div>
  );
}

export function SelectInput({
  label,
  registration,
  error,
  hint,
  options,
  ...rest
}: Common & {
  options: ReadonlyArray<{ value: string; label: string }>;
} & Omit<SelectHTMLAttributes<HTMLSelectElement>, Bound>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, error, hint)}
        {...rest}
        {...registration}
      >
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
      <Below id={id} error={error} hint={hint} />
    </div>
  );
}

/** A group of checkboxes bound to one array field. */
export function CheckboxGroup({
  legend,
  registration,
  error,
  options,
}: {
  legend: string;
  registration: UseFormRegisterReturn;
  error?: FieldError | undefined;
  options: ReadonlyArray<{ value: string; label: string }>;
}) {
  const id = useId();
  return (
    <fieldset className="field" aria-describedby={error ? `${id}-error` : undefined}>
      <legend>{legend}</legend>
      {options.map((option) => (
        <label key={option.value} className="check">
          <input type="checkbox" value={option.value} {...registration} /> {option.label}
        </label>
      ))}
      {error && (
        <span id={`${id}-error`} className="field-error">
          {error.message ?? 'Choose at least one.'}
        </span>
      )}
    </fieldset>
  );
}
