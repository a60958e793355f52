/** Storefront events from themes: written as they come, without the client's address. */
import type { TTrackInput } from '@svc/schemas';
import { newId } from '../../lib/ids.js';
import type { ServiceContext } from '../request/context.js';
import { findSellingStore } from '../stores/selling-store.js';
import { TrackEventSchema } from './tracking.entities.js';

export async function track(ctx: ServiceContext, input: TTrackInput): Promise<void> {
  const store = await findSellingStore(ctx, input.storeId);
  ctx.em.create(TrackEventSchema, {
    id: newId(),
    store: store.id,
    type: input.type,
    productId: input.productId ?? null,
    path: input.path ?? null,
    createdAt: ctx.clock.now(),
  });
  await ctx.em.flush();
}
