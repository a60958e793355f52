/**
 * The one Idempotency-Key step, for procedures whose policy declares `idempotency` (the
 * order-creating routes), scoped to the store the input names in the declared field, by its id:
 * an id and a subdomain (in any case) name the same store, so they claim the same key (issue 26:
 * the same key and body with the subdomain instead of the id made a second order). A request
 * with the header claims (procedure, store, key) before the procedure runs:
 * - the same key and body again replays the stored answer with `Idempotent-Replayed: true`
 *   and runs nothing (the REST status follows from the route's meta, as the first time);
 * - the same key with another body is 422 idempotency_key_reused;
 * - a repeat while the first is still running is 409 idempotency_key_in_use;
 * - a failed attempt (any error) releases the key, and a claim left without an answer for
 *   CLAIM_TIMEOUT_MS (a crashed process) may be taken over.
 * The body is compared by SHA-256 of its canonical JSON (sorted keys) with the store named by
 * its id, so whitespace, key order and the way the store is named do not make another body. The claims themselves are the idempotency module's
 * (modules/idempotency/), kept 24 h (pruneIdempotencyKeys), their results sealed.
 * Without the header nothing changes. The claim reaches the service in the context
 * (`ctx.idempotency`): the service that does the work records its result in the work's own
 * transaction, so the work and its result commit together, and on a replay it gives the recorded
 * result back without doing anything; the resolver then answers from it as the first time.
 * `replayable()` marks such a resolver (the route table refuses an idempotent procedure without
 * it) and checks that a run recorded its result.
 */
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { AppError, invalidField } from '../lib/errors.js';
import {
  decide,
  idempotentResponseKey,
  releaseClaim,
  type Claim,
  type Decision,
  type IdempotentCall,
} from '../modules/idempotency/idempotency.service.js';
import type { Context } from '../modules/request/context.js';
import { selectStoreRef } from '../modules/stores/stores.repo.js';
import type { SvcMeta } from './init.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';

const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** The request's key; undefined without the header, 400 when it is not 1..255 printable ASCII characters. */
export function idempotencyKeyOf(ctx: Pick<Context, 'caller'>): string | undefined {
  const value = ctx.caller.credentials.idempotencyKey;
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !KEY_PATTERN.test(value)) {
    throw invalidField(IDEMPOTENCY_HEADER, 'Must be 1 to 255 printable ASCII characters.');
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** JSON with the keys of every object sorted; the same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined || typeof item === 'function' ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  if (isPlainObject(value)) {
    const entries = Object.keys(value)
      .sort()
      .filter((key) => value[key] !== undefined && typeof value[key] !== 'function')
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The store a request is for, by its id, and the input with the store named so: the route's
 * declared field holds an id or a subdomain. A store that does not exist is scoped as written
 * (the procedure answers 404, and a failed run releases its key); '' when the field holds none.
 */
async function scopeOf(ctx: Context, input: unknown, storeField: string): Promise<{ scope: string; scoped: unknown }> {
  const named = isPlainObject(input) ? input[storeField] : undefined;
  if (typeof named !== 'string' || named === '') return { scope: '', scoped: input };
  const store = await selectStoreRef(ctx.em, named);
  if (!store) return { scope: named, scoped: input };
  return { scope: store.id, scoped: { ...(input as Record<string, unknown>), [storeField]: store.id } };
}

/** The claim's outcome: run the procedure, replay what is stored, or 409 while the first still runs. */
async function claimOrAnswer(ctx: Context, claim: Claim): Promise<Exclude<Decision, { inUse: true }>> {
  const decision = await decide(ctx, { claim, responseKey: idempotentResponseKey(ctx.deps.config.encryptionKey) });
  if ('inUse' in decision) {
    ctx.answer.headers['Retry-After'] = '1';
    throw new AppError(
      'idempotency_key_in_use',
      'A request with this Idempotency-Key is still being processed; retry shortly.',
    );
  }
  return decision;
}

const REPLAYABLE = Symbol('svc.replayable');

/**
 * Marks an idempotent procedure's resolver, whose service honours `ctx.idempotency`: an answer
 * stored by an earlier version is given back without calling it, and a run that did not record
 * its result is a failure of ours (its work would not be protected from a retry), not an answer.
 * (A tRPC middleware cannot answer by itself without tRPC's internal result marker.)
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the resolver's own (annotated) options type is kept
export function replayable<Resolver extends (opts: any) => Promise<unknown>>(resolve: Resolver): Resolver {
  const wrapped = async (opts: { ctx: object; path?: string }) => {
    const call = (opts.ctx as { idempotency?: IdempotentCall }).idempotency;
    if (call?.mode === 'answer') return call.data;
    const data = await resolve(opts);
    if (call?.mode === 'run' && !call.recorded)
      throw new Error(`${opts.path ?? 'procedure'}: the service did not record its result in its transaction`);
    return data;
  };
  return Object.assign(wrapped, { [REPLAYABLE]: true }) as unknown as Resolver;
}

export function isReplayable(resolver: unknown): boolean {
  return typeof resolver === 'function' && (resolver as unknown as Record<symbol, unknown>)[REPLAYABLE] === true;
}

/**
 * The step itself, run by the procedures' request step (procedures.ts) with the call's raw
 * input and its `next`: without a declared store field or without the header it just runs
 * `next()`; otherwise it runs it with the claim, or with what to replay, as `ctx.idempotency`.
 */
export async function applyIdempotency<Result extends { ok: boolean; data?: unknown }>(
  ctx: Context,
  meta: SvcMeta | undefined,
  path: string,
  input: unknown,
  next: (opts?: { ctx: { idempotency: IdempotentCall } }) => Promise<Result>,
): Promise<Result> {
  const storeField = meta?.idempotency?.storeField;
  if (!storeField) return next();
  const key = idempotencyKeyOf(ctx);
  if (key === undefined) return next();

  const { scope, scoped } = await scopeOf(ctx, input, storeField);
  const claim: Claim = {
    path,
    scope,
    keyHash: sha256Hex(key),
    bodyHash: sha256Hex(canonicalJson(scoped)),
    token: randomToken(16),
  };
  const decision = await claimOrAnswer(ctx, claim);
  if (!decision.run) {
    ctx.answer.headers[REPLAYED_HEADER] = 'true';
    const stored = JSON.parse(decision.response) as unknown;
    return next({
      ctx: {
        idempotency: decision.kind === 'result' ? { mode: 'replay', result: stored } : { mode: 'answer', data: stored },
      },
    });
  }

  const call: IdempotentCall = { mode: 'run', claim, status: meta.successStatus ?? 200, recorded: false };
  let result: Result | undefined;
  try {
    result = await next({ ctx: { idempotency: call } });
  } finally {
    // A failed run gives the key back (a successful one recorded its result with its work, or
    // replayable() failed it); a claim already holding a result is not released: its retry replays it.
    if (!result?.ok) {
      await releaseClaim(ctx, claim).catch((error: unknown) =>
        // The claim stays until it counts as abandoned; a repeat meanwhile is 409.
        ctx.log.error({ err: error, path: claim.path }, 'idempotency: releasing the key failed'),
      );
    }
  }
  return result;
}
