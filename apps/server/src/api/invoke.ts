/**
 * Calls a procedure of the route table with a request's context, as tRPC's own procedure caller
 * does (the same middlewares in the same order: the request steps, the builder's guard, the
 * input and output schemas, the resolver), without its per-layer copies. tRPC 11's
 * `callRecursive` copies the call's options, and each context a middleware extends, with a
 * property-descriptor helper (`_objectSpread2`: `ownKeys` and `defineProperty` per key) on every
 * layer; that copying was 8 % of a License API validation's samples. Here each layer gets a
 * fresh options object built by an object spread, which V8 clones without descriptors; what a
 * middleware sees is the same: `ctx`, `input`, `getRawInput`, `meta`, `path`, `type`, `next`.
 * REST calls procedures through this; /trpc through tRPC's adapter, which runs the same chain.
 */
import { TRPCError, getTRPCErrorFromUnknown, type AnyProcedure } from '@trpc/server';

/** What the caller hands the first layer (tRPC's ProcedureCallOptions). */
export interface CallOptions {
  ctx: object;
  path: string;
  type: 'query' | 'mutation';
  getRawInput: () => Promise<unknown>;
  input?: unknown;
  signal: AbortSignal | undefined;
  batchIndex: number;
}

/** What a middleware may hand to `next()`. */
interface NextOptions {
  ctx?: object;
  input?: unknown;
  getRawInput?: () => Promise<unknown>;
}

type MiddlewareResult = { ok: true; data: unknown } | { ok: false; error: TRPCError };
type Middleware = (
  opts: CallOptions & { meta: unknown; next: (opts?: NextOptions) => Promise<MiddlewareResult> },
) => Promise<MiddlewareResult>;

interface ProcedureDef {
  middlewares: Middleware[];
  meta: unknown;
}

/** tRPC's marker on a middleware's result (its `middlewareMarker`). */
const MARKER = 'middlewareMarker';

/** One layer: the middleware at `index` with these options; a throw becomes a failed result, as in tRPC. */
async function callLayer(def: ProcedureDef, index: number, opts: CallOptions): Promise<MiddlewareResult> {
  try {
    const middleware = def.middlewares[index]!;
    return await middleware({
      ...opts,
      meta: def.meta,
      next: (next?: NextOptions) =>
        callLayer(def, index + 1, {
          ...opts,
          ctx: next?.ctx ? { ...opts.ctx, ...next.ctx } : opts.ctx,
          input: next && 'input' in next ? next.input : opts.input,
          getRawInput: next?.getRawInput ?? opts.getRawInput,
        }),
    });
  } catch (cause) {
    return { ok: false, error: getTRPCErrorFromUnknown(cause), marker: MARKER } as MiddlewareResult;
  }
}

/** The procedure's answer, or its error thrown (a TRPCError, as tRPC's caller throws it). */
export async function invokeProcedure(procedure: AnyProcedure, opts: CallOptions): Promise<unknown> {
  const def = procedure._def as unknown as ProcedureDef;
  const result = await callLayer(def, 0, opts);
  if (!result)
    throw new TRPCError({
      code: 'INTERNAL_SERVER_ERROR',
      message: 'No result from middlewares - did you forget to `return next()`?',
    });
  if (!result.ok) throw result.error;
  return result.data;
}
