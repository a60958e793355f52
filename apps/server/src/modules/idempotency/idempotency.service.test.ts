/**
 * Idempotency-Key claims against the real database: the result of a run is recorded in the run's
 * own transaction, sealed (the checkout token it carries is not in the table in clear), and
 * replays exactly; a result whose transaction rolls back leaves the claim to be released or taken
 * over; a run whose claim was taken over cannot record (its transaction rolls back); a repeat with
 * another body is refused; answers stored by earlier versions (sealed:v1, in clear) still replay.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { ManualClock } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { IdempotencyKeySchema } from './idempotency.entities.js';
import { seal } from '../../lib/crypto.js';
import {
  decide,
  IDEMPOTENCY_CLAIM_TIMEOUT_MS,
  idempotentResponseKey,
  recordIdempotentResult,
  type Claim,
  type IdempotentCall,
} from './idempotency.service.js';

let orm: Orm;
const encryptionKey = randomBytes(32);
const responseKey = idempotentResponseKey(encryptionKey);
const clock = new ManualClock(new Date('2026-11-24T10:00:00Z'));

beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const claimOf = (body: string): Claim => ({
  path: 'orders.create',
  scope: `store-${randomBytes(4).toString('hex')}`,
  keyHash: sha256Hex(randomBytes(8).toString('hex')),
  bodyHash: sha256Hex(body),
  token: randomBytes(16).toString('hex'),
});

/** What a service sees of its request's claim, and what it records it with. */
const runOf = (claim: Claim): IdempotentCall & { mode: 'run' } => ({
  mode: 'run',
  claim,
  status: 201,
  recorded: false,
});
const serviceCtx = (call: IdempotentCall) => ({ idempotency: call, clock, deps: { config: { encryptionKey } } });
const rowOf = (claim: Claim) =>
  orm.em.fork().findOne(IdempotencyKeySchema, { path: claim.path, scope: claim.scope, keyHash: claim.keyHash });

describe('idempotent results', () => {
  it("records the result sealed in the work's transaction: the checkout token is not in the row, and a repeat replays it exactly", async () => {
    const claim = claimOf('{"cart":1}');
    expect(await decide({ em: orm.em.fork(), clock: clock }, { claim: claim, responseKey: responseKey })).toEqual({
      run: true,
    });
    const checkoutToken = randomBytes(32).toString('base64url');
    // An id with a '-', which base64 never holds: the check below cannot pass or fail by chance.
    const result = { order: { id: 'order-one', status: 'pending' }, checkoutToken };
    const call = runOf(claim);
    await orm.em.fork().transactional((em) => recordIdempotentResult({ ...serviceCtx(call), em: em }, result));
    expect(call.recorded).toBe(true);

    const row = (await rowOf(claim))!;
    expect(row.status).toBe(201);
    expect(row.response).not.toContain(checkoutToken);
    expect(row.response).not.toContain('order-one');
    expect(row.response).toMatch(/^sealed:v2:/);

    const repeat = await decide(
      { em: orm.em.fork(), clock: clock },
      { claim: { ...claim, token: 'another-request' }, responseKey: responseKey },
    );
    expect(repeat).toEqual({ run: false, response: JSON.stringify(result), kind: 'result' });
    // Another body with the same key is refused, whatever is stored.
    await expect(
      decide(
        { em: orm.em.fork(), clock: clock },
        { claim: { ...claim, bodyHash: sha256Hex('{"cart":2}'), token: 'x' }, responseKey: responseKey },
      ),
    ).rejects.toMatchObject({ appCode: 'idempotency_key_reused' });
    // Under another app key the sealed answer does not open.
    await expect(
      decide(
        { em: orm.em.fork(), clock: clock },
        { claim: { ...claim, token: 'y' }, responseKey: idempotentResponseKey(randomBytes(32)) },
      ),
    ).rejects.toThrow();
  });

  it("records nothing when the work's transaction rolls back: the abandoned claim is taken over and runs again", async () => {
    const claim = claimOf('{"cart":4}');
    expect(await decide({ em: orm.em.fork(), clock: clock }, { claim: claim, responseKey: responseKey })).toEqual({
      run: true,
    });
    await expect(
      orm.em.fork().transactional(async (em) => {
        await recordIdempotentResult({ ...serviceCtx(runOf(claim)), em: em }, { order: { id: 'o4' } });
        throw new Error('the work failed after recording');
      }),
    ).rejects.toThrow('the work failed after recording');
    expect((await rowOf(claim))!.response).toBeNull();
    // Before the claim timeout a repeat waits (409); after it, the repeat takes the claim over.
    expect(
      await decide(
        { em: orm.em.fork(), clock: clock },
        { claim: { ...claim, token: 'early' }, responseKey: responseKey },
      ),
    ).toEqual({
      run: false,
      inUse: true,
    });
    const later = new ManualClock(new Date(clock.now().getTime() + IDEMPOTENCY_CLAIM_TIMEOUT_MS + 1));
    expect(
      await decide(
        { em: orm.em.fork(), clock: later },
        { claim: { ...claim, token: 'retry' }, responseKey: responseKey },
      ),
    ).toEqual({ run: true });
  });

  it('refuses to record for a run whose claim a retry took over, so its transaction rolls back', async () => {
    const claim = claimOf('{"cart":5}');
    expect(await decide({ em: orm.em.fork(), clock: clock }, { claim: claim, responseKey: responseKey })).toEqual({
      run: true,
    });
    const later = new ManualClock(new Date(clock.now().getTime() + IDEMPOTENCY_CLAIM_TIMEOUT_MS + 1));
    const retry = { ...claim, token: 'retry' };
    expect(await decide({ em: orm.em.fork(), clock: later }, { claim: retry, responseKey: responseKey })).toEqual({
      run: true,
    });
    // The slow first run reaches its commit only now.
    const slow = runOf(claim);
    await expect(
      orm.em
        .fork()
        .transactional((em) => recordIdempotentResult({ ...serviceCtx(slow), em: em }, { order: { id: 'first' } })),
    ).rejects.toMatchObject({ appCode: 'idempotency_key_in_use' });
    expect(slow.recorded).toBe(false);
    await orm.em
      .fork()
      .transactional((em) =>
        recordIdempotentResult({ ...serviceCtx(runOf(retry)), em: em }, { order: { id: 'retried' } }),
      );
    expect(
      await decide(
        { em: orm.em.fork(), clock: later },
        { claim: { ...claim, token: 'third' }, responseKey: responseKey },
      ),
    ).toEqual({
      run: false,
      response: JSON.stringify({ order: { id: 'retried' } }),
      kind: 'result',
    });
  });

  it('records nothing without an Idempotency-Key, and nothing on a replay', async () => {
    const em = orm.em.fork();
    await recordIdempotentResult({ ...{ clock, deps: { config: { encryptionKey } } }, em: em }, { order: { id: 'x' } });
    await recordIdempotentResult(
      { ...serviceCtx({ mode: 'replay', result: { order: { id: 'x' } } }), em: em },
      {
        order: { id: 'x' },
      },
    );
  });

  it('replays answers stored by earlier versions: sealed:v1, and in clear before answers were sealed', async () => {
    const legacy = JSON.stringify({ order: { id: 'o2' } });
    for (const stored of [`sealed:v1:${seal(responseKey, legacy)}`, legacy]) {
      const claim = claimOf('{"cart":3}');
      expect(await decide({ em: orm.em.fork(), clock: clock }, { claim: claim, responseKey: responseKey })).toEqual({
        run: true,
      });
      await orm.em
        .fork()
        .nativeUpdate(
          IdempotencyKeySchema,
          { path: claim.path, scope: claim.scope, keyHash: claim.keyHash },
          { status: 201, response: stored, completedAt: clock.now() },
        );
      expect(
        await decide(
          { em: orm.em.fork(), clock: clock },
          { claim: { ...claim, token: 'again' }, responseKey: responseKey },
        ),
      ).toEqual({
        run: false,
        response: legacy,
        kind: 'answer',
      });
    }
  });
});
