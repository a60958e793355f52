/** The application router: every domain's procedures, one tree for /trpc and REST. */
import { storesRouter } from '../modules/stores/stores.router.js';
import { router } from './procedures.js';
import { pinInputCoercion } from './strict-input.js';

export const appRouter = router({
  stores: storesRouter,
});

pinInputCoercion(appRouter);

export type AppRouter = typeof appRouter;
