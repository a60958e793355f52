/**
 * The Idempotency-Key as the context carries it (modules/idempotency works with it; the context
 * holds it): its own file, so the request's context does not import idempotency's service.
 */

export interface Claim {
  path: string;
  scope: string;
  keyHash: string;
  bodyHash: string;
  /** This request's random token: only its holder may answer or release the claim. */
  token: string;
}

/**
 * What is stored: `result`, what the service returned (sealed:v2, written in its transaction);
 * `answer`, what the procedure answered (sealed:v1 or in clear, written after the answer by
 * earlier versions; gone within the 24 h retention).
 */
export type StoredKind = 'result' | 'answer';

export type Decision = { run: true } | { run: false; response: string; kind: StoredKind } | { run: false; inUse: true };

/**
 * The request's Idempotency-Key as the service doing the work sees it (the idempotency step puts
 * it in the context): `run`, do the work and record its result with recordIdempotentResult in the
 * same transaction; `replay`, the work was done: give this result back and do nothing; `answer`,
 * an answer stored by an earlier version, given back without calling the service.
 */
export type IdempotentCall =
  | { mode: 'run'; claim: Claim; status: number; recorded: boolean }
  | { mode: 'replay'; result: unknown }
  | { mode: 'answer'; data: unknown };
