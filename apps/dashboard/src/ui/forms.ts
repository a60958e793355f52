import type { BaseSyntheticEvent } from 'react';
import type { FieldValues, SubmitHandler, UseFormReturn } from 'react-hook-form';

/** A form's onSubmit: react-hook-form validates with the schema, then `submit` runs (its promise is the mutation's). */
export function onValid<T extends FieldValues>(form: UseFormReturn<T>, submit: SubmitHandler<T>) {
  return (event?: BaseSyntheticEvent): void => {
    void form.handleSubmit(submit)(event);
  };
}
