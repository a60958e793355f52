/**
 * Idempotency-Key claims against the real database: the stored answer of a successful run is
 * sealed (the checkout token it carries is not in the table in clear) and replays exactly; a
 * repeat with another body is refused; rows stored in clear before sealing still replay.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { ManualClock } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { IdempotencyKeySchema } from './idempotency.entities.js';
import { decide, idempotentResponseKey, storeResponse, type Claim } from './idempotency.service.js';

let orm: Orm;
const responseKey = idempotentResponseKey(randomBytes(32));
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

describe('idempotent replies', () => {
  it('stores the answer sealed: the checkout token is not in the row, and a repeat replays it exactly', async () => {
    const claim = claimOf('{"cart":1}');
    expect(await decide(orm.em.fork(), clock, claim, responseKey)).toEqual({ run: true });
    const checkoutToken = randomBytes(32).toString('base64url');
    const answer = { order: { id: 'o1', status: 'pending' }, checkoutToken, checkoutUrl: `https://shop.example/checkout/o1?token=${checkoutToken}` };
    await storeResponse(orm.em.fork(), clock, claim, 201, answer, responseKey);

    const row = await orm.em.fork().findOneOrFail(IdempotencyKeySchema, { path: claim.path, scope: claim.scope, keyHash: claim.keyHash });
    expect(row.status).toBe(201);
    expect(row.response).not.toContain(checkoutToken);
    expect(row.response).not.toContain('o1');
    expect(row.response).toMatch(/^sealed:v1:/);

    const repeat = await decide(orm.em.fork(), clock, { ...claim, token: 'another-request' }, responseKey);
    expect(repeat).toEqual({ run: false, response: JSON.stringify(answer) });
    // Another body with the same key is refused, whatever is stored.
    await expect(decide(orm.em.fork(), clock, { ...claim, bodyHash: sha256Hex('{"cart":2}'), token: 'x' }, responseKey)).rejects.toMatchObject({ appCode: 'idempotency_key_reused' });
    // Under another app key the sealed answer does not open.
    await expect(decide(orm.em.fork(), clock, { ...claim, token: 'y' }, idempotentResponseKey(randomBytes(32)))).rejects.toThrow();
  });

  it('replays an answer stored in clear before answers were sealed', async () => {
    const claim = claimOf('{"cart":3}');
    expect(await decide(orm.em.fork(), clock, claim, responseKey)).toEqual({ run: true });
    const legacy = JSON.stringify({ order: { id: 'o2' } });
    await orm.em.fork().nativeUpdate(IdempotencyKeySchema, { path: claim.path, scope: claim.scope, keyHash: claim.keyHash }, { status: 201, response: legacy, completedAt: clock.now() });
    expect(await decide(orm.em.fork(), clock, { ...claim, token: 'again' }, responseKey)).toEqual({ run: false, response: legacy });
  });
});
