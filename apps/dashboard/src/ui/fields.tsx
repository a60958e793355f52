/**
 * Form fields for react-hook-form: a native control with its <label>, its description and its error
 * tied to it (aria-invalid, aria-describedby) and shown under it, the error first. Native controls
 * are the accessible default; React Aria is used where the platform has no widget (dialogs, menus).
 * A field is as wide as what it holds (`width`), never the whole page.
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

/** How wide a field is: `sm` a code or an amount, `md` a name or an address, `lg` a sentence or a paragraph. */
export type FieldWidth = 'sm' | 'md' | 'lg' | 'full';
const WIDTHS: Record<FieldWidth, string> = { sm: 'max-w-48', md: 'max-w-sm', lg: 'max-w-xl', full: 'max-w-none' };

interface Common {
  label: string;
  registration: UseFormRegisterReturn;
  error?: FieldError | undefined;
  hint?: ReactNode;
  width?: FieldWidth;
}

function describedBy(id: string, error: unknown, hint: unknown): string | undefined {
  const ids = [error ? `${id}-error` : '', hint ? `${id}-hint` : ''].filter(Boolean);
  return ids.length ? ids.join(' ') : undefined;
}

function Below({ id, error, hint }: { id: string; error?: FieldError | undefined; hint?: ReactNode }) {
  return (
    <>
      {error && (
        <span id={`${id}-error`} className="field-error">
          {error.message || 'Check this field.'}
        </span>
      )}
      {hint && (
        <span id={`${id}-hint`} className="hint">
          {hint}
        </span>
      )}
    </>
  );
}

/** What a field gives its control: the id its label names, and its error and hint tied to it. */
interface ControlProps {
  id: string;
  className: string;
  'aria-invalid': true | undefined;
  'aria-describedby': string | undefined;
}

/** The one field wrapper: a label, the control `children` renders with ControlProps, the hint and the error under it. */
function Field({
  label,
  error,
  hint,
  width = 'lg',
  children,
}: Omit<Common, 'registration'> & { children: (control: ControlProps) => ReactNode }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({
        id,
        className: WIDTHS[width],
        'aria-invalid': error ? true : undefined,
        'aria-describedby': describedBy(id, error, hint),
      })}
      <Below id={id} error={error} hint={hint} />
    </div>
  );
}

export function TextInput({
  label,
  registration,
  error,
  hint,
  width,
  ...rest
}: Common & Omit<InputHTMLAttributes<HTMLInputElement>, Bound>) {
  return (
    <Field label={label} error={error} hint={hint} width={width}>
      {(control) => (
        <input {...control} {...rest} className={`${control.className} ${rest.className ?? ''}`} {...registration} />
      )}
    </Field>
  );
}

export function TextArea({
  label,
  registration,
  error,
  hint,
  width,
  ...rest
}: Common & Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, Bound>) {
  return (
    <Field label={label} error={error} hint={hint} width={width}>
      {(control) => (
        <textarea {...control} {...rest} className={`${control.className} ${rest.className ?? ''}`} {...registration} />
      )}
    </Field>
  );
}

export function SelectInput({
  label,
  registration,
  error,
  hint,
  options,
  width = 'md',
  ...rest
}: Common & {
  options: ReadonlyArray<{ value: string; label: string }>;
} & Omit<SelectHTMLAttributes<HTMLSelectElement>, Bound>) {
  return (
    <Field label={label} error={error} hint={hint} width={width}>
      {(control) => (
        <select {...control} {...rest} className={`${control.className} ${rest.className ?? ''}`} {...registration}>
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
  // The error is tied to each box too: a screen reader on a box hears why the group is refused.
  const described = error ? `${id}-error` : undefined;
  return (
    <fieldset className="field" aria-describedby={described}>
      <legend className="mb-1">{legend}</legend>
      {options.map((option) => (
        <label key={option.value} className="check">
          <input
            type="checkbox"
            value={option.value}
            aria-invalid={error ? true : undefined}
            aria-describedby={described}
            {...registration}
          />{' '}
          {option.label}
        </label>
      ))}
      {error && (
        <span id={`${id}-error`} className="field-error">
          {error.message || 'Choose at least one.'}
        </span>
      )}
    </fieldset>
  );
}
