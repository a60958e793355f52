/** Store schemas shown to the public and to sellers. */
import { z } from 'zod';

/** Subdomain rule: lowercase letters, digits and hyphens, 3-63 chars, no leading/trailing hyphen. */
export const ZSubdomain = z
  .string()
  .min(3)
  .max(63)
  .regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/, 'lowercase letters, digits and hyphens only');

export const ZCurrency = z
  .string()
  .length(3)
  .regex(/^[A-Z]{3}$/, 'an ISO 4217 code in capitals');

export const ZStoreLookupInput = z.strictObject({
  subdomain: z.string().min(1).max(63),
});
export type TStoreLookupInput = z.infer<typeof ZStoreLookupInput>;

/** What anyone may see of a store: no owner, no settings, no ban reason. */
export const ZStorePublic = z.object({
  id: z.string(),
  name: z.string(),
  subdomain: z.string(),
  currency: z.string(),
  createdAt: z.iso.datetime(),
});
export type TStorePublic = z.infer<typeof ZStorePublic>;
