/** The one id generator: cuid2 for database ids, `evt_` ids for events. */
import { createId, isCuid } from '@paralleldrive/cuid2';

export function newId(): string {
  return createId();
}

export function looksLikeId(value: string): boolean {
  return isCuid(value);
}
