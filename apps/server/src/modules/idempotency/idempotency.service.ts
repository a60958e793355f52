/**
 * Idempotency-Key claims, without the transport (trpc/idempotency.middleware.ts reads the header
 * and answers): a request claims (procedure, store as given, key) before its procedure runs; the
 * same key and body again gets the stored answer; the same key with another body is refused; a
 * claim left without an answer for CLAIM_TIMEOUT_MS (a crashed process) may be taken over.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../lib/errors.js';
import type { Clock } from '../../lib/clock.js';
import { deriveKey, seal, unseal } from '../../lib/crypto.js';
import { IdempotencyKeySchema } from './idempotency.entities.js';
import { deleteKeysBefore, insertClaim } from './idempotency.repo.js';

/** How long a key is remembered. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 3600_000;
/** A claim without an answer this old belongs to a process that died; it may be taken over. */
export const IDEMPOTENCY_CLAIM_TIMEOUT_MS = 60_000;

export interface Claim {
  path: string;
  scope: string;
  keyHash: string;
  bodyHash: string;
  /** This request's random token: only its holder may answer or release the claim. */
  token: string;
}

export type Decision = { run: true } | { run: false; response: string } | { run: false; inUse: true };

const keyOf = (claim: Claim) => ({ path: claim.path, scope: claim.scope, keyHash: claim.keyHash });

/** Claims the key, or says what to answer instead of running the procedure. */
export async function decide(em: EntityManager, clock: Clock, claim: Claim, responseKey: Buffer): Promise<Decision> {
  // A row can vanish between the insert and the read (its attempt failed): then claim again.
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = clock.now();
    if (await insertClaim(em, { ...keyOf(claim), bodyHash: claim.bodyHash, claim: claim.token, at: now })) return { run: true };
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
    if (existing.response != null) return { run: false, response: openResponse(responseKey, existing.response) };
    break;
  }
  return { run: false, inUse: true };
}

/**
 * The stored answer is sealed (AES-256-GCM under the app key's `idempotent-response` key): it holds
 * what the order-creating routes answer, the checkout token and the URL carrying it among them,
 * which the order itself stores only as a hash. Rows written in clear before replies were sealed
 * (no prefix) still replay; they are gone within the 24 h retention.
 */
const SEALED_PREFIX = 'sealed:v1:';

export function idempotentResponseKey(encryptionKey: Buffer): Buffer {
  return deriveKey(encryptionKey, 'idempotent-response');
}

function openResponse(responseKey: Buffer, stored: string): string {
  return stored.startsWith(SEALED_PREFIX) ? unseal(responseKey, stored.slice(SEALED_PREFIX.length)) : stored;
}

/** Stores the answer of the claim's successful run, sealed. */
export async function storeResponse(em: EntityManager, clock: Clock, claim: Claim, status: number, data: unknown, responseKey: Buffer): Promise<void> {
  const response = `${SEALED_PREFIX}${seal(responseKey, JSON.stringify(data ?? null))}`;
  await em.nativeUpdate(IdempotencyKeySchema, { ...keyOf(claim), claim: claim.token }, { status, response, completedAt: clock.now() });
}

/** Gives the key back after a failed run, so a retry runs again. */
export async function releaseClaim(em: EntityManager, claim: Claim): Promise<void> {
  await em.nativeDelete(IdempotencyKeySchema, { ...keyOf(claim), claim: claim.token, response: null });
}

/** Forgets keys older than the retention (24 h); the scheduled job. */
export async function pruneIdempotencyKeys(deps: { orm: { em: EntityManager }; clock: Clock }, retentionMs = IDEMPOTENCY_RETENTION_MS): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - retentionMs);
  let total = 0;
  for (;;) {
    const deleted = await deleteKeysBefore(deps.orm.em.fork(), cutoff, 5000);
    total += deleted;
    if (deleted < 5000) return total;
  }
}
