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

/** What a field gives its control: the id its label names, and its error and hint tied to it. */
interface ControlProps {
  id: string;
  'aria-invalid': true | undefined;
  'aria-describedby': string | undefined;
}

/** The one field wrapper: a label, the control `children` renders with ControlProps, the hint and the error under it. */
function Field({
  label,
  error,
  hint,
  children,
}: Omit<Common, 'registration'> & { children: (control: ControlProps) => ReactNode }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-invalid': error ? true : undefined, 'aria-describedby': describedBy(id, error, hint) })}
      <Below id={id} error={error} hint={hint} />
    </div>
  );
}

export function TextInput({
  label,
  registration,
  error,
  hint,
  ...rest
}: Common & Omit<InputHTMLAttributes<HTMLInputElement>, Bound>) {
  return (
    <Field label={label} error={error} hint={hint}>
      {(control) => <input {...control} {...rest} {...registration} />}
    </Field>
  );
}

export function TextArea({
  label,
  registration,
  error,
  hint,
  ...rest
}: Common & Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, Bound>) {
  return (
    <Field label={label} error={error} hint={hint}>
      {(control) => <textarea {...control} {...rest} {...registration} />}
    </Field>
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
  return (
    <Field label={label} error={error} hint={hint}>
      {(control) => (
        <select {...control} {...rest} {...registration}>
          {options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      )}
    </Field>
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
