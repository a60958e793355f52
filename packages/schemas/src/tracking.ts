/** Storefront events a theme records. No IP address is kept. */
import { z } from 'zod';
import { ZId } from './common.js';

export const TRACK_EVENT_TYPES = ['page_view', 'product_view', 'add_to_cart', 'checkout_start'] as const;
export const ZTrackEventType = z.enum(TRACK_EVENT_TYPES);
export type TTrackEventType = z.infer<typeof ZTrackEventType>;

/** `POST /api/track`: the store by id or subdomain. */
export const ZTrackInput = z.strictObject({
  storeId: z.string().min(1).max(63),
  type: ZTrackEventType,
  productId: ZId.optional(),
  path: z.string().max(500).optional(),
});
export type TTrackInput = z.infer<typeof ZTrackInput>;
