/**
 * Merchant API key rules against the real database, without HTTP: keys are made only for the
 * creator's stores, shown once and stored as a SHA-256; a request's Bearer key is refused
 * (unauthorized; the transport adds the Bearer challenge) when missing, malformed, unknown,
 * expired or revoked; and the merchant
 * guard (access/guards.ts authorizeMerchant) checks storeId, scope, the key's store list, the
 * owner's current membership and permission ceiling, and the per-key budget, in that order.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { uniqueSubdomain } from '../../../../../test/support/factories.js';
import { requestContext, serviceContext } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { ManualClock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { Context, ServiceContext } from '../request/context.js';
import { authorizeMerchant } from '../access/guards.js';
import type { User } from '../identity/identity.entities.js';
import { createUser } from '../identity/identity.service.js';
import { addMember, createStore, removeMember, updateMember } from '../stores/stores.service.js';
import { ApiKeySchema } from './api-keys.entities.js';
import { authenticateApiKey } from './api-key-credential.js';
import { createApiKey, listApiKeys, revokeApiKey } from './api-keys.service.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const START = Date.UTC(2026, 3, 1, 12, 0);
const KEY_SHAPE = /^sk_live_[0-9A-Za-z]{40}$/;
const TEST_KEY_SHAPE = /^sk_test_[0-9A-Za-z]{40}$/;

/** The AppError a call rejects with; fails the test when it resolves or throws anything else. */
async function appError(promise: Promise<unknown>, code: string): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).appCode).toBe(code);
  return error as AppError;
}

const newUser = (ctx: ServiceContext): Promise<User> =>
  createUser(ctx, {
    email: `seller-${randomBytes(6).toString('hex')}@example.test`,
    password: 'correct horse battery staple',
  });

const newStoreOf = async (ctx: ServiceContext, owner: User): Promise<string> =>
  (await createStore(ctx, owner, { name: 'Shop', subdomain: uniqueSubdomain() })).id;

/** A request context presenting `authorization` (or nothing). */
const presenting = (base: ServiceContext, authorization?: string): Context =>
  requestContext(base, authorization === undefined ? {} : { credentials: { authorization } });

const bearer = (base: ServiceContext, key: string): Context => presenting(base, `Bearer ${key}`);

const storedKey = (id: string) => orm.em.fork().findOneOrFail(ApiKeySchema, { id });

describe('createApiKey', () => {
  it('makes an sk_live_ key of 40 base62 characters, shown once, with only its SHA-256 stored', async () => {
    const ctx = serviceContext(orm, new ManualClock(START));
    const owner = await newUser(ctx);
    const storeId = await newStoreOf(ctx, owner);

    const { apiKey, key } = await createApiKey(ctx, owner, { name: 'CI', scopes: ['order:read'], storeIds: [storeId] });
    const second = await createApiKey(ctx, owner, { name: 'CI 2', scopes: ['order:read'], storeIds: [storeId] });

    expect(key).toMatch(KEY_SHAPE);
    expect(second.key).toMatch(KEY_SHAPE);
    expect(second.key).not.toBe(key);
    expect(apiKey).toEqual({
      id: apiKey.id,
      name: 'CI',
      prefix: key.slice(0, 14),
      mode: 'live',
      scopes: ['order:read'],
      storeIds: [storeId],
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
      createdAt: new Date(START).toISOString(),
    });

    const [row] = await orm.em
      .fork()
      .execute<Array<{ row: string; key_hash: string }>>(
        'select to_jsonb(k)::text as row, k.key_hash from api_key k where k.id = ?',
        [apiKey.id],
      );
    expect(row!.key_hash).toBe(createHash('sha256').update(key).digest('hex'));
    // Neither the key nor its secret part (after the 14-character prefix) is stored anywhere in the row.
    expect(row!.row).not.toContain(key);
    expect(row!.row).not.toContain(key.slice(14));
    expect(row!.row).not.toContain(key.slice(8));
  });

  it('makes an sk_test_ key for mode test, whose record says test and whose requests are test calls', async () => {
    const ctx = serviceContext(orm, new ManualClock(START));
    const owner = await newUser(ctx);
    const storeId = await newStoreOf(ctx, owner);

    const test = await createApiKey(ctx, owner, {
      name: 'Test',
      mode: 'test',
      scopes: ['order:read'],
      storeIds: [storeId],
    });
    const live = await createApiKey(ctx, owner, {
      name: 'Live',
      mode: 'live',
      scopes: ['order:read'],
      storeIds: [storeId],
    });

    expect(test.key).toMatch(TEST_KEY_SHAPE);
    expect(test.apiKey).toMatchObject({ mode: 'test', prefix: test.key.slice(0, 14) });
    expect(live.key).toMatch(KEY_SHAPE);
    expect(live.apiKey.mode).toBe('live');
    // Both made at the same instant of the manual clock: compare by name.
    expect((await listApiKeys(ctx, owner)).map((key) => [key.name, key.mode]).sort()).toEqual([
      ['Live', 'live'],
      ['Test', 'test'],
    ]);
    await expect(
      authenticateApiKey(presenting(serviceContext(orm), `Bearer ${test.key}`), storeId),
    ).resolves.toMatchObject({
      keyId: test.apiKey.id,
      livemode: false,
    });
    await expect(
      authenticateApiKey(presenting(serviceContext(orm), `Bearer ${live.key}`), storeId),
    ).resolves.toMatchObject({
      keyId: live.apiKey.id,
      livemode: true,
    });
  });

  it('keeps a key issued before modes (sk_ and 40 characters, no mode given) working as a live key', async () => {
    const ctx = serviceContext(orm, new ManualClock(START));
    const owner = await newUser(ctx);
    const storeId = await newStoreOf(ctx, owner);
    const legacy = `sk_${randomBytes(30)
      .toString('base64')
      .replace(/[^0-9A-Za-z]/g, '')
      .padEnd(40, 'x')
      .slice(0, 40)}`;
    const id = newId();
    // As the rows of keys made before modes: no mode written, the column's default applies.
    await orm.em.fork().execute(
      `insert into api_key (id, user_id, name, prefix, key_hash, scopes, store_ids, created_at)
       values (?, ?, 'old', ?, ?, '{order:read}', ?, now())`,
      [id, owner.id, legacy.slice(0, 10), createHash('sha256').update(legacy).digest('hex'), `{${storeId}}`],
    );
    await expect(
      authenticateApiKey(presenting(serviceContext(orm), `Bearer ${legacy}`), storeId),
    ).resolves.toMatchObject({
      keyId: id,
      livemode: true,
    });
    expect((await listApiKeys(ctx, owner)).find((key) => key.id === id)?.mode).toBe('live');
  });

  it('refuses stores the user is not a member of, including stores that do not exist', async () => {
    const ctx = serviceContext(orm);
    const owner = await newUser(ctx);
    const stranger = await newUser(ctx);
    const mine = await newStoreOf(ctx, owner);
    const theirs = await newStoreOf(ctx, stranger);

    await appError(
      createApiKey(ctx, owner, { name: 'k', scopes: ['order:read'], storeIds: [theirs] }),
      'store_forbidden',
    );
    await appError(
      createApiKey(ctx, owner, { name: 'k', scopes: ['order:read'], storeIds: [mine, theirs] }),
      'store_forbidden',
    );
    await appError(
      createApiKey(ctx, owner, { name: 'k', scopes: ['order:read'], storeIds: [mine, newId()] }),
      'store_forbidden',
    );
    expect(await listApiKeys(serviceContext(orm), owner)).toEqual([]);
  });

  it('lets staff make keys for their store, deduplicates stores and scopes, and refuses an expiry in the past', async () => {
    const clock = new ManualClock(START);
    const ctx = serviceContext(orm, clock);
    const owner = await newUser(ctx);
    const staff = await newUser(ctx);
    const storeId = await newStoreOf(ctx, owner);
    await addMember(ctx, storeId, { email: staff.email, permissions: ['viewOrders'] });

    const { apiKey } = await createApiKey(ctx, staff, {
      name: 'k',
      scopes: ['order:read', 'order:read'],
      storeIds: [storeId, storeId],
    });
    expect(apiKey).toMatchObject({ scopes: ['order:read'], storeIds: [storeId] });

    for (const expiresAt of [new Date(START).toISOString(), new Date(START - 1).toISOString()]) {
      await appError(
        createApiKey(ctx, owner, { name: 'k', scopes: ['order:read'], storeIds: [storeId], expiresAt }),
        'validation_failed',
      );
    }
    const later = new Date(START + 1).toISOString();
    expect(
      (await createApiKey(ctx, owner, { name: 'k', scopes: ['order:read'], storeIds: [storeId], expiresAt: later }))
        .apiKey.expiresAt,
    ).toBe(later);
  });
});

describe('listApiKeys and revokeApiKey', () => {
  it("lists the user's own keys, oldest first, by prefix only", async () => {
    const clock = new ManualClock(START);
    const ctx = serviceContext(orm, clock);
    const owner = await newUser(ctx);
    const other = await newUser(ctx);
    const storeId = await newStoreOf(ctx, owner);
    const otherStore = await newStoreOf(ctx, other);
    const first = await createApiKey(ctx, owner, { name: 'first', scopes: ['order:read'], storeIds: [storeId] });
    clock.advance(1_000);
    const second = await createApiKey(ctx, owner, { name: 'second', scopes: ['webhook:read'], storeIds: [storeId] });
    await createApiKey(ctx, other, { name: 'theirs', scopes: ['order:read'], storeIds: [otherStore] });

    const listed = await listApiKeys(serviceContext(orm), owner);
    expect(listed).toEqual([first.apiKey, second.apiKey]);
    expect(JSON.stringify(listed)).not.toContain(first.key.slice(10));
    expect(JSON.stringify(listed)).not.toContain(second.key.slice(10));
  });

  it("revokes the user's own key once (the first time stays), and answers not_found for another user's key", async () => {
    const clock = new ManualClock(START);
    const ctx = serviceContext(orm, clock);
    const owner = await newUser(ctx);
    const other = await newUser(ctx);
    const storeId = await newStoreOf(ctx, owner);
    const { apiKey, key } = await createApiKey(ctx, owner, { name: 'k', scopes: ['order:read'], storeIds: [storeId] });

    await appError(revokeApiKey(serviceContext(orm, clock), other, apiKey.id), 'not_found');
    await appError(revokeApiKey(serviceContext(orm, clock), owner, newId()), 'not_found');
    expect((await storedKey(apiKey.id)).revokedAt).toBeNull();
    await authenticateApiKey(bearer(serviceContext(orm, clock), key), storeId);

    clock.advance(1_000);
    await revokeApiKey(serviceContext(orm, clock), owner, apiKey.id);
    clock.advance(1_000);
    await revokeApiKey(serviceContext(orm, clock), owner, apiKey.id);
    const [listed] = await listApiKeys(serviceContext(orm), owner);
    expect(listed!.revokedAt).toBe(new Date(START + 1_000).toISOString());
  });
});

describe('authenticateApiKey', () => {
  async function ownerWithKey(clock: ManualClock, expiresAt?: string) {
    const ctx = serviceContext(orm, clock);
    const owner = await newUser(ctx);
    const storeId = await newStoreOf(ctx, owner);
    const created = await createApiKey(ctx, owner, {
      name: 'k',
      scopes: ['order:read'],
      storeIds: [storeId],
      ...(expiresAt ? { expiresAt } : {}),
    });
    return { ctx, owner, storeId, ...created };
  }

  it('answers a request without Authorization with unauthorized (the transport adds the Bearer challenge: test/merchant-auth.test.ts)', async () => {
    const ctx = presenting(serviceContext(orm));
    await appError(authenticateApiKey(ctx, newId()), 'unauthorized');
  });

  it('refuses malformed and unknown keys as unauthorized', async () => {
    const { key, storeId } = await ownerWithKey(new ManualClock(START));
    const unknown = `sk_${'A'.repeat(40)}`;
    const malformed = [
      `Basic ${Buffer.from('user:pass').toString('base64')}`,
      key, // no scheme
      `Bearer ${key.slice(0, -1)}`, // 39 characters
      `Bearer ${key}x`, // 41 characters
      `Bearer ${key.slice(0, -1)}-`, // not base62
      `Bearer pk_${key.slice(3)}`,
      `Bearer sk_demo_${key.slice(8)}`, // not a mode
      `Bearer sk_live${key.slice(8)}`, // the mode without its underscore
      `Bearer ${key} extra`,
    ];
    for (const authorization of [...malformed, `Bearer ${unknown}`]) {
      const ctx = presenting(serviceContext(orm), authorization);
      await appError(authenticateApiKey(ctx, storeId), 'unauthorized');
    }
  });

  it('reads the scheme name whatever its case, and any number of spaces after it (RFC 9110 §11)', async () => {
    const { key, storeId } = await ownerWithKey(new ManualClock(START));
    for (const authorization of [`bearer ${key}`, `BEARER ${key}`, `Bearer  ${key}`]) {
      await expect(authenticateApiKey(presenting(serviceContext(orm), authorization), storeId)).resolves.toMatchObject({
        storeIds: [storeId],
      });
    }
  });

  it('refuses a malformed token even when its hash is on file (the format is checked before the lookup)', async () => {
    const { owner, storeId } = await ownerWithKey(new ManualClock(START));
    const malformed = `sk_${randomBytes(8).toString('hex')}`;
    await orm.em.fork().insert(ApiKeySchema, {
      id: newId(),
      user: owner.id,
      name: 'odd',
      prefix: malformed.slice(0, 10),
      keyHash: createHash('sha256').update(malformed).digest('hex'),
      scopes: ['order:read'],
      storeIds: [storeId],
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
      createdAt: new Date(START),
    });
    const ctx = presenting(serviceContext(orm), `Bearer ${malformed}`);
    await appError(authenticateApiKey(ctx, storeId), 'unauthorized');
  });

  it('refuses an expired key from its expiresAt by the clock', async () => {
    const clock = new ManualClock(START);
    const { key, storeId } = await ownerWithKey(clock, new Date(START + 3600_000).toISOString());

    clock.advance(3600_000 - 1);
    const before = bearer(serviceContext(orm, clock), key);
    await authenticateApiKey(before, storeId);

    clock.advance(1);
    const at = bearer(serviceContext(orm, clock), key);
    await appError(authenticateApiKey(at, storeId), 'unauthorized');
  });

  it('refuses a revoked key from the next request on', async () => {
    const clock = new ManualClock(START);
    const { owner, key, apiKey, storeId } = await ownerWithKey(clock);
    await authenticateApiKey(bearer(serviceContext(orm, clock), key), storeId);

    await revokeApiKey(serviceContext(orm, clock), owner, apiKey.id);
    const ctx = bearer(serviceContext(orm, clock), key);
    await appError(authenticateApiKey(ctx, storeId), 'unauthorized');
  });

  it('writes lastUsedAt on first use, then at most once per 60 s', async () => {
    const clock = new ManualClock(START);
    const { key, apiKey, storeId } = await ownerWithKey(clock);
    const use = () => authenticateApiKey(bearer(serviceContext(orm, clock), key), storeId);
    const lastUsed = async () => (await storedKey(apiKey.id)).lastUsedAt?.getTime() ?? null;

    expect(await lastUsed()).toBeNull();
    clock.advance(5_000);
    await use();
    expect(await lastUsed()).toBe(START + 5_000);
    clock.advance(59_999);
    await use();
    expect(await lastUsed()).toBe(START + 5_000);
    clock.advance(1);
    await use();
    expect(await lastUsed()).toBe(START + 65_000);
    clock.advance(30_000);
    await use();
    expect(await lastUsed()).toBe(START + 65_000);
  });

  it("carries the owner's membership of the store the request names, or null", async () => {
    const ctx = serviceContext(orm);
    const owner = await newUser(ctx);
    const staff = await newUser(ctx);
    const storeId = await newStoreOf(ctx, owner);
    const elsewhere = await newStoreOf(ctx, owner);
    await addMember(ctx, storeId, { email: staff.email, permissions: ['viewOrders', 'manageSettings'] });
    const ownerKey = await createApiKey(ctx, owner, {
      name: 'o',
      scopes: ['order:read', 'webhook:read'],
      storeIds: [storeId],
    });
    const staffKey = await createApiKey(ctx, staff, { name: 's', scopes: ['order:read'], storeIds: [storeId] });

    const asOwner = await authenticateApiKey(bearer(serviceContext(orm), ownerKey.key), storeId);
    expect(asOwner).toEqual({
      keyId: ownerKey.apiKey.id,
      livemode: true,
      userId: owner.id,
      scopes: ['order:read', 'webhook:read'],
      storeIds: [storeId],
      member: { role: 'owner', permissions: [] },
    });
    const asStaff = await authenticateApiKey(bearer(serviceContext(orm), staffKey.key), storeId);
    expect(asStaff).toMatchObject({
      keyId: staffKey.apiKey.id,
      userId: staff.id,
      member: { role: 'staff', permissions: ['viewOrders', 'manageSettings'] },
    });
    // The staff member is not in the owner's other store; the key itself is still valid there.
    expect((await authenticateApiKey(bearer(serviceContext(orm), staffKey.key), elsewhere)).member).toBeNull();
    expect((await authenticateApiKey(bearer(serviceContext(orm), ownerKey.key), '')).member).toBeNull();
  });
});

describe('authorizeMerchant (the merchant guard)', () => {
  /** An owner, a staff member with `staffPermissions`, their store, and a key for each. */
  async function merchantSetup(
    opts: {
      env?: Record<string, string>;
      staffPermissions?: Array<'viewOrders' | 'editOrders' | 'manageProducts' | 'manageSettings'>;
    } = {},
  ) {
    const clock = new ManualClock(START);
    const base = serviceContext(orm, clock, opts.env);
    const owner = await newUser(base);
    const staff = await newUser(base);
    const storeId = await newStoreOf(base, owner);
    const otherStoreId = await newStoreOf(base, owner);
    const member = await addMember(base, storeId, {
      email: staff.email,
      permissions: opts.staffPermissions ?? ['viewOrders'],
    });
    const allScopes = ['order:read', 'order:update', 'webhook:read', 'webhook:write', 'webhook:delete'] as const;
    const ownerKey = (await createApiKey(base, owner, { name: 'owner', scopes: [...allScopes], storeIds: [storeId] }))
      .key;
    const staffKey = (await createApiKey(base, staff, { name: 'staff', scopes: [...allScopes], storeIds: [storeId] }))
      .key;
    return { clock, base, owner, staff, storeId, otherStoreId, memberId: member.id, ownerKey, staffKey };
  }

  it('lets a key with the scope, the store and the permission through', async () => {
    const { base, storeId, ownerKey, staffKey } = await merchantSetup();
    const granted = await authorizeMerchant(bearer(base, ownerKey), 'webhook:write', { storeId, other: 'ignored' });
    expect(granted.storeId).toBe(storeId);
    expect(granted.credential.member?.role).toBe('owner');
    expect((await authorizeMerchant(bearer(base, staffKey), 'order:read', { storeId })).credential.member?.role).toBe(
      'staff',
    );
  });

  it('answers an unauthenticated request unauthorized before looking at its storeId; then a missing storeId is validation_failed', async () => {
    const { base, ownerKey } = await merchantSetup();
    for (const input of [undefined, {}, { storeId: '' }]) {
      const anonymous = presenting(base);
      await appError(authorizeMerchant(anonymous, 'order:read', input), 'unauthorized');
      await appError(authorizeMerchant(presenting(base, 'Bearer nonsense'), 'order:read', input), 'unauthorized');
    }
    for (const input of [undefined, {}, { storeId: '' }, { storeId: 42 }]) {
      const error = await appError(authorizeMerchant(bearer(base, ownerKey), 'order:read', input), 'validation_failed');
      expect(error.issues?.map((issue) => issue.path)).toEqual(['storeId']);
    }
  });

  it('refuses a key without the scope with scope_missing', async () => {
    const { base, owner, storeId } = await merchantSetup();
    const { key } = await createApiKey(base, owner, { name: 'read only', scopes: ['order:read'], storeIds: [storeId] });
    await appError(authorizeMerchant(bearer(base, key), 'order:update', { storeId }), 'scope_missing');
    await appError(authorizeMerchant(bearer(base, key), 'webhook:read', { storeId }), 'scope_missing');
    await authorizeMerchant(bearer(base, key), 'order:read', { storeId });
  });

  it("refuses a store outside the key's list with store_forbidden, also one the owner has and one that does not exist", async () => {
    const { base, storeId, otherStoreId, ownerKey } = await merchantSetup();
    await appError(
      authorizeMerchant(bearer(base, ownerKey), 'order:read', { storeId: otherStoreId }),
      'store_forbidden',
    );
    await appError(authorizeMerchant(bearer(base, ownerKey), 'order:read', { storeId: newId() }), 'store_forbidden');
    await authorizeMerchant(bearer(base, ownerKey), 'order:read', { storeId });
  });

  it('refuses the key of an owner who is no longer a member with store_forbidden', async () => {
    const { base, storeId, memberId, staffKey } = await merchantSetup();
    await authorizeMerchant(bearer(base, staffKey), 'order:read', { storeId });

    await removeMember(serviceContext(orm), storeId, memberId);
    await appError(authorizeMerchant(bearer(base, staffKey), 'order:read', { storeId }), 'store_forbidden');
  });

  it("caps each scope by the owner's current permission (SCOPE_CEILING) with permission_missing, read at request time", async () => {
    const { base, storeId, memberId, ownerKey, staffKey } = await merchantSetup();
    const scopes = ['order:read', 'order:update', 'webhook:read', 'webhook:write', 'webhook:delete'] as const;
    // docs/decisions.md: order:read needs viewOrders, order:update editOrders, webhook:* manageSettings.
    const allowedWith: Record<string, readonly string[]> = {
      viewOrders: ['order:read'],
      editOrders: ['order:update'],
      manageProducts: [],
      manageSettings: ['webhook:read', 'webhook:write', 'webhook:delete'],
    };
    for (const [permission, allowed] of Object.entries(allowedWith)) {
      // A lowered (or changed) permission counts from the next request, without a new key.
      await updateMember(serviceContext(orm), storeId, { memberId, permissions: [permission as 'viewOrders'] });
      for (const scope of scopes) {
        const outcome = authorizeMerchant(bearer(base, staffKey), scope, { storeId });
        if (allowed.includes(scope)) await outcome;
        else await appError(outcome, 'permission_missing');
      }
    }
    // Owners hold every permission.
    for (const scope of scopes) await authorizeMerchant(bearer(base, ownerKey), scope, { storeId });
  });

  it('caps store:write by manageSettings and store:read by membership alone (the dashboard asks no permission to see the store)', async () => {
    const { base, staff, storeId, memberId } = await merchantSetup();
    const { key } = await createApiKey(base, staff, {
      name: 'store',
      scopes: ['store:read', 'store:write'],
      storeIds: [storeId],
    });
    for (const permissions of [[], ['viewOrders'], ['manageProducts']] as const) {
      await updateMember(serviceContext(orm), storeId, { memberId, permissions: [...permissions] });
      await authorizeMerchant(bearer(base, key), 'store:read', { storeId });
      await appError(authorizeMerchant(bearer(base, key), 'store:write', { storeId }), 'permission_missing');
    }
    await updateMember(serviceContext(orm), storeId, { memberId, permissions: ['manageSettings'] });
    await authorizeMerchant(bearer(base, key), 'store:write', { storeId });
    // No longer a member: not even the read.
    await removeMember(serviceContext(orm), storeId, memberId);
    await appError(authorizeMerchant(bearer(base, key), 'store:read', { storeId }), 'store_forbidden');
  });

  it('limits each key to MERCHANT_RATE_LIMIT_PER_MINUTE calls in a sliding minute, with the rate-limit headers', async () => {
    const { clock, base, owner, storeId, ownerKey } = await merchantSetup({
      env: { MERCHANT_RATE_LIMIT_PER_MINUTE: '3' },
    });
    const { key: secondKey } = await createApiKey(base, owner, {
      name: 'second',
      scopes: ['order:read'],
      storeIds: [storeId],
    });

    for (const remaining of ['2', '1', '0']) {
      const ctx = bearer(base, ownerKey);
      await authorizeMerchant(ctx, 'order:read', { storeId });
      expect(ctx.answer.headers).toMatchObject({ 'X-RateLimit-Limit': '3', 'X-RateLimit-Remaining': remaining });
      expect(ctx.answer.headers['Retry-After']).toBeUndefined();
      clock.advance(1_000);
    }

    // Three calls at 0 s, 1 s and 2 s; the fourth at 3 s waits until the first leaves the window at 60 s.
    const limited = bearer(base, ownerKey);
    await appError(authorizeMerchant(limited, 'order:read', { storeId }), 'rate_limited');
    expect(limited.answer.headers).toMatchObject({
      'X-RateLimit-Limit': '3',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '57',
      'Retry-After': '57',
    });

    // The budget is per key: another key of the same owner is not affected.
    await authorizeMerchant(bearer(base, secondKey), 'order:read', { storeId });

    clock.set(START + 60_000);
    const again = bearer(base, ownerKey);
    await authorizeMerchant(again, 'order:read', { storeId });
    expect(again.answer.headers['Retry-After']).toBeUndefined();
  });
});
