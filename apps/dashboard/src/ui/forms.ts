import type { BaseSyntheticEvent } from 'react';
import type { FieldValues, SubmitHandler, UseFormReturn } from 'react-hook-form';

/**
 * A form's onSubmit: react-hook-form validates with the schema, then `submit` runs (its promise is the mutation's).
 * `submit` gets the schema's output (`Out`), which differs from the fields' values when the schema transforms them.
 */
export function onValid<T extends FieldValues, C, Out extends FieldValues = T>(
  form: UseFormReturn<T, C, Out>,
  submit: SubmitHandler<Out>,
) {
  return (event?: BaseSyntheticEvent): void => {
    void form.handleSubmit(submit)(event);
  };
}
