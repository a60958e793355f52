import type { BaseSyntheticEvent } from 'react';
import type { FieldValues, SubmitHandler, UseFormReturn } from 'react-hook-form';
import { sellerErrorMap } from '@svc/schemas';
import { z } from 'zod';

// zod 4 probes whether it may compile validators with `new Function`; under the page's CSP
// (script-src 'self') the probe is refused and reported as a violation. Interpreted is enough here.
// Every issue a form's resolver finds is said as the API says it: @svc/schemas' error map.
z.config({ jitless: true, customError: sellerErrorMap });

/**
 * A form's onSubmit: react-hook-form validates with the schema, then `submit` runs (its promise is the mutation's)
 * with the schema's output (a schema may turn the inputs' text into the API's input).
 */
export function onValid<T extends FieldValues, C, O extends FieldValues = T>(
  form: UseFormReturn<T, C, O>,
  submit: SubmitHandler<O>,
) {
  return (event?: BaseSyntheticEvent): void => {
    void form.handleSubmit(submit)(event);
  };
}
