/**
 * Idempotency-Key claims, without the transport (trpc/idempotency.middleware.ts reads the header
 * and answers): a request claims (procedure, store id, key) before its procedure runs; the
 * same key and body again gets the stored result; the same key with another body is refused; a
 * claim left without a result for CLAIM_TIMEOUT_MS (a crashed process) may be taken over.
 *
 * The result is written by the service that does the work, in the transaction that does it
 * (recordIdempotentResult): the order and the claim's result commit together or not at all. A
 * claim without a result therefore never stands for committed work, so taking it over cannot do
 * the work twice; and a run whose claim was taken over (it outlived CLAIM_TIMEOUT_MS) finds the
 * claim no longer its own, and its transaction rolls back.
 */
import { AppError } from '../../lib/errors.js';
import { deriveKey, seal, unseal } from '../../lib/crypto.js';
import { IdempotencyKeySchema } from './idempotency.entities.js';
import { deleteKeysBefore, insertClaim } from './idempotency.repo.js';
import type { ServiceContext } from '../request/context.js';
import type { Claim, Decision, StoredKind } from '../request/idempotent-call.js';

export type { Claim, Decision, IdempotentCall, StoredKind } from '../request/idempotent-call.js';

/** How long a key is remembered. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 3600_000;
/** A claim without an answer this old belongs to a process that died; it may be taken over. */
export const IDEMPOTENCY_CLAIM_TIMEOUT_MS = 60_000;

const keyOf = (claim: Claim) => ({ path: claim.path, scope: claim.scope, keyHash: claim.keyHash });

/** Claims the key, or says what to answer instead of running the procedure. */
export async function decide(
  ctx: Pick<ServiceContext, 'em' | 'clock'>,
  input: { claim: Claim; responseKey: Buffer },
): Promise<Decision> {
  const { em, clock } = ctx;
  const { claim, responseKey } = input;
  // A row can vanish between the insert and the read (its attempt failed): then claim again.
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = clock.now();
    if (await insertClaim(em, { ...keyOf(claim), bodyHash: claim.bodyHash, claim: claim.token, at: now }))
      return { run: true };
    const existing = await em.findOne(IdempotencyKeySchema, keyOf(claim), { refresh: true, disableIdentityMap: true });
    if (!existing) continue;
    const staleBefore = new Date(now.getTime() - IDEMPOTENCY_CLAIM_TIMEOUT_MS);
    if (existing.response == null && existing.claimedAt < staleBefore) {
      // Take over the abandoned claim; false when someone else did first.
      const taken = await em.nativeUpdate(
        IdempotencyKeySchema,
        { ...keyOf(claim), response: null, claimedAt: { $lt: staleBefore } },
        { bodyHash: claim.bodyHash, claim: claim.token, createdAt: now, claimedAt: now },
      );
      if (taken > 0) return { run: true };
      continue;
    }
    if (existing.bodyHash !== claim.bodyHash) {
      throw new AppError('idempotency_key_reused', 'This Idempotency-Key was already used with another request body.');
    }
    if (existing.response != null) return { run: false, ...openResponse(responseKey, existing.response) };
    break;
  }
  return { run: false, inUse: true };
}

/**
 * What is stored is sealed (AES-256-GCM under the app key's `idempotent-response` key): it holds
 * the order's checkout token, which the order itself stores only as a hash. `sealed:v2:` is a
 * service's result; `sealed:v1:` (and rows in clear, from before sealing) an answer stored by an
 * earlier version after it was given; both replay, and are gone within the 24 h retention.
 */
const RESULT_PREFIX = 'sealed:v2:';
const ANSWER_PREFIX = 'sealed:v1:';

export function idempotentResponseKey(encryptionKey: Buffer): Buffer {
  return deriveKey(encryptionKey, 'idempotent-response');
}

function openResponse(responseKey: Buffer, stored: string): { response: string; kind: StoredKind } {
  if (stored.startsWith(RESULT_PREFIX))
    return { response: unseal(responseKey, stored.slice(RESULT_PREFIX.length)), kind: 'result' };
  if (stored.startsWith(ANSWER_PREFIX))
    return { response: unseal(responseKey, stored.slice(ANSWER_PREFIX.length)), kind: 'answer' };
  return { response: stored, kind: 'answer' };
}

/**
 * Records the result of the work the request's claim stands for, in the transaction the context
 * does the work in (inTransaction's), sealed; nothing without an Idempotency-Key. The claim must still be this request's and
 * without a result: when a retry took it over (this run outlived the claim timeout), this throws
 * 409 idempotency_key_in_use and the transaction, with the work, rolls back.
 */
export async function recordIdempotentResult(
  ctx: Pick<ServiceContext, 'em' | 'idempotency' | 'clock'> & { deps: { config: { encryptionKey: Buffer } } },
  result: unknown,
): Promise<void> {
  const { em } = ctx;
  const call = ctx.idempotency;
  if (call?.mode !== 'run') return;
  const response = `${RESULT_PREFIX}${seal(idempotentResponseKey(ctx.deps.config.encryptionKey), JSON.stringify(result ?? null))}`;
  const recorded = await em.nativeUpdate(
    IdempotencyKeySchema,
    { ...keyOf(call.claim), claim: call.claim.token, response: null },
    { status: call.status, response, completedAt: ctx.clock.now() },
  );
  if (recorded === 0) {
    throw new AppError(
      'idempotency_key_in_use',
      'A retry with this Idempotency-Key took the request over; its answer is the one that counts.',
    );
  }
  call.recorded = true;
}

/** Gives the key back after a failed run, so a retry runs again. */
export async function releaseClaim(ctx: Pick<ServiceContext, 'em'>, claim: Claim): Promise<void> {
  await ctx.em.nativeDelete(IdempotencyKeySchema, { ...keyOf(claim), claim: claim.token, response: null });
}

/** Forgets keys older than the retention (24 h); the scheduled job. */
export async function pruneIdempotencyKeys(
  ctx: Pick<ServiceContext, 'em' | 'clock'>,
  input: { retentionMs?: number } = {},
): Promise<number> {
  const cutoff = new Date(ctx.clock.now().getTime() - (input.retentionMs ?? IDEMPOTENCY_RETENTION_MS));
  let total = 0;
  for (;;) {
    const deleted = await deleteKeysBefore(ctx.em.fork(), cutoff, 5000);
    total += deleted;
    if (deleted < 5000) return total;
  }
}
