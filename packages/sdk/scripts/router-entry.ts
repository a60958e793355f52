// Read by scripts/generate-api-types.mjs only: the router's input and output types, which the
// generator prints out in full so the published declarations name no server module.
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../../apps/server/src/api/app-router.js';

export declare const inputs: inferRouterInputs<AppRouter>;
export declare const outputs: inferRouterOutputs<AppRouter>;
