/**
 * The one Idempotency-Key step, for procedures whose policy declares `idempotency` (the
 * order-creating routes), scoped to the store the input names in the declared field. A request
 * with the header claims (procedure, store, key) before the procedure runs:
 * - the same key and body again replays the stored answer with `Idempotent-Replayed: true`
 *   and runs nothing (the REST status follows from the route's meta, as the first time);
 * - the same key with another body is 422 idempotency_key_reused;
 * - a repeat while the first is still running is 409 idempotency_key_in_use;
 * - a failed attempt (any error) releases the key, and a claim left without an answer for
 *   CLAIM_TIMEOUT_MS (a crashed process) may be taken over.
 * The body is compared by SHA-256 of its canonical JSON (sorted keys), so whitespace and
 * key order do not make another body. Keys are kept RETENTION_MS (pruneIdempotencyKeys).
 * Without the header nothing changes. A replay runs the procedure's resolver only as far as
 * `replayable()`, which answers the stored data instead (the route table refuses an idempotent
 * procedure whose resolver is not wrapped).
 */
import type { AppDeps } from '../deps.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { AppError, invalidField } from '../lib/errors.js';
import type { Context } from './context.js';
import { t } from './init.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** How long a key is remembered. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 3600_000;
/** A claim without an answer this old belongs to a process that died; it may be taken over. */
export const IDEMPOTENCY_CLAIM_TIMEOUT_MS = 60_000;

const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** The request's key; undefined without the header, 400 when it is not 1..255 printable ASCII characters. */
export function idempotencyKeyOf(ctx: Pick<Context, 'request'>): string | undefined {
  const value = ctx.request.credentials.idempotencyKey;
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

/** The store a request is for, as the client gave it in the route's declared field; '' when none. */
function scopeOf(input: unknown, storeField: string): string {
  if (!isPlainObject(input)) return '';
  const store = input[storeField];
  return typeof store === 'string' ? store : '';
}

interface Claim {
  path: string;
  scope: string;
  keyHash: string;
  bodyHash: string;
  token: string;
}

interface ExistingRow {
  body_hash: string;
  response: string | null;
  stale: boolean;
}

const WHERE_CLAIM = `path = ? and scope = ? and key_hash = ?`;

async function insertClaim(ctx: Context, claim: Claim): Promise<boolean> {
  const now = ctx.clock.now();
  const rows: unknown[] = await ctx.em.execute(
    `insert into idempotency_key (path, scope, key_hash, body_hash, claim, created_at, claimed_at) values (?, ?, ?, ?, ?, ?, ?)
     on conflict (path, scope, key_hash) do nothing returning key_hash`,
    [claim.path, claim.scope, claim.keyHash, claim.bodyHash, claim.token, now, now],
  );
  return rows.length > 0;
}

async function readClaim(ctx: Context, claim: Claim): Promise<ExistingRow | undefined> {
  const staleBefore = new Date(ctx.clock.now().getTime() - IDEMPOTENCY_CLAIM_TIMEOUT_MS);
  const rows: ExistingRow[] = await ctx.em.execute(
    `select body_hash, response, (response is null and claimed_at < ?) as stale from idempotency_key where ${WHERE_CLAIM}`,
    [staleBefore, claim.path, claim.scope, claim.keyHash],
  );
  return rows[0];
}

/** Takes over a claim abandoned without an answer; false when someone else did first. */
async function takeOver(ctx: Context, claim: Claim): Promise<boolean> {
  const now = ctx.clock.now();
  const staleBefore = new Date(now.getTime() - IDEMPOTENCY_CLAIM_TIMEOUT_MS);
  const rows: unknown[] = await ctx.em.execute(
    `update idempotency_key set body_hash = ?, claim = ?, created_at = ?, claimed_at = ?
     where ${WHERE_CLAIM} and response is null and claimed_at < ? returning key_hash`,
    [claim.bodyHash, claim.token, now, now, claim.path, claim.scope, claim.keyHash, staleBefore],
  );
  return rows.length > 0;
}

async function storeResponse(ctx: Context, claim: Claim, status: number, data: unknown): Promise<void> {
  try {
    await ctx.em.execute(
      `update idempotency_key set status = ?, response = ?, completed_at = ? where ${WHERE_CLAIM} and claim = ?`,
      [status, JSON.stringify(data ?? null), ctx.clock.now(), claim.path, claim.scope, claim.keyHash, claim.token],
    );
  } catch (error) {
    // The answer is given anyway; the claim stays until it counts as abandoned.
    ctx.log.error({ err: error, path: claim.path }, 'idempotency: storing the response failed');
  }
}

async function releaseClaim(ctx: Context, claim: Claim): Promise<void> {
  try {
    await ctx.em.execute(`delete from idempotency_key where ${WHERE_CLAIM} and claim = ? and response is null`, [
      claim.path,
      claim.scope,
      claim.keyHash,
      claim.token,
    ]);
  } catch (error) {
    // The claim stays until it counts as abandoned; a repeat meanwhile is 409.
    ctx.log.error({ err: error, path: claim.path }, 'idempotency: releasing the key failed');
  }
}

type Decision = { run: true } | { run: false; response: string };

/** Claims the key, or says what to answer instead of running the procedure. */
async function decide(ctx: Context, claim: Claim): Promise<Decision> {
  // A row can vanish between the insert and the read (its attempt failed): then claim again.
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await insertClaim(ctx, claim)) return { run: true };
    const existing = await readClaim(ctx, claim);
    if (!existing) continue;
    if (existing.stale) {
      if (await takeOver(ctx, claim)) return { run: true };
      continue;
    }
    if (existing.body_hash !== claim.bodyHash) {
      throw new AppError('idempotency_key_reused', 'This Idempotency-Key was already used with another request body.');
    }
    if (existing.response !== null) return { run: false, response: existing.response };
    break;
  }
  ctx.response.headers['Retry-After'] = '1';
  throw new AppError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry shortly.');
}

/** Set in the context when the stored answer is to be given instead of running the procedure. */
export interface IdempotentReplay {
  data: unknown;
}

const REPLAYABLE = Symbol('svc.replayable');

/**
 * Wraps an idempotent procedure's resolver: on a replay it answers the stored data and runs
 * nothing. (A tRPC middleware cannot answer by itself without tRPC's internal result marker.)
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the resolver's own (annotated) options type is kept
export function replayable<Resolver extends (opts: any) => Promise<unknown>>(resolve: Resolver): Resolver {
  const wrapped = async (opts: { ctx: object }) => {
    const replay = (opts.ctx as { idempotentReplay?: IdempotentReplay }).idempotentReplay;
    return replay ? replay.data : resolve(opts);
  };
  return Object.assign(wrapped, { [REPLAYABLE]: true }) as unknown as Resolver;
}

export function isReplayable(resolver: unknown): boolean {
  return typeof resolver === 'function' && (resolver as unknown as Record<symbol, unknown>)[REPLAYABLE] === true;
}

export const applyIdempotency = t.middleware(async ({ ctx, meta, path, getRawInput, next }) => {
  const storeField = meta?.idempotency?.storeField;
  if (!storeField) return next();
  const key = idempotencyKeyOf(ctx);
  if (key === undefined) return next();

  const input = await getRawInput();
  const claim: Claim = {
    path,
    scope: scopeOf(input, storeField),
    keyHash: sha256Hex(key),
    bodyHash: sha256Hex(canonicalJson(input)),
    token: randomToken(16),
  };
  const decision = await decide(ctx, claim);
  if (!decision.run) {
    ctx.response.headers[REPLAYED_HEADER] = 'true';
    const idempotentReplay: IdempotentReplay = { data: JSON.parse(decision.response) as unknown };
    return next({ ctx: { idempotentReplay } });
  }

  let result: Awaited<ReturnType<typeof next>> | undefined;
  try {
    result = await next();
  } finally {
    if (result?.ok) await storeResponse(ctx, claim, meta.successStatus ?? 200, result.data);
    else await releaseClaim(ctx, claim);
  }
  return result;
});

/** Forgets keys older than the retention (24 h); the scheduled job. */
export async function pruneIdempotencyKeys(deps: AppDeps, retentionMs = IDEMPOTENCY_RETENTION_MS): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - retentionMs);
  let total = 0;
  for (;;) {
    const deleted: unknown[] = await deps.orm.em.fork().execute(
      `delete from idempotency_key where ctid in (select ctid from idempotency_key where created_at < ? limit 5000) returning key_hash`,
      [cutoff],
    );
    total += deleted.length;
    if (deleted.length < 5000) return total;
  }
}
