/**
 * The owner's rule that every member of a store signs in with two factors, against the real
 * database and without HTTP: only the owner sets it (a staff member with manageSettings cannot),
 * only with two-factor sign-in on their own account; once on, the store guard (requireMember)
 * refuses a member without it with `two_factor_enrolment_required`, owner included, and lets them
 * in once they enrolled; a stranger is still `store_forbidden` (the rule is not told to them).
 */
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { codeOf, requestContext, serviceContext } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { ManualClock } from '../../lib/clock.js';
import { UserSchema } from '../identity/identity.entities.js';
import { createUser } from '../identity/identity.service.js';
import { confirmTwoFactor, disableTwoFactor, startTwoFactor } from '../identity/two-factor.js';
import type { ServiceContext } from '../request/context.js';
import { findMembership } from '../stores/membership.js';
import { StoreSchema } from '../stores/stores.entities.js';
import { addMember, createStore, getStore, setRequireTwoFactor } from '../stores/stores.service.js';
import { requireMember } from './guards.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 4 });
});
afterAll(() => orm?.close());

const PASSWORD = 'the right password';
const ip = () => `10.${randomBytes(3).join('.')}`;
const fresh = (base: ServiceContext): ServiceContext => ({ ...base, em: orm.em.fork() });
const req = (base: ServiceContext) => requestContext(fresh(base), { ip: ip() });

async function person(base: ServiceContext) {
  const email = `pol-${randomBytes(5).toString('hex')}@example.test`;
  const user = await createUser(fresh(base), { email, password: PASSWORD });
  return { id: user.id, email };
}

/** Two-factor sign-in turned on for the account, as the Account page does it. */
async function enrol(base: ServiceContext, clock: ManualClock, userId: string): Promise<void> {
  const { secret } = await startTwoFactor(req(base), userId);
  const code = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({
    timestamp: clock.now().getTime(),
  });
  await confirmTwoFactor(req(base), userId, { code });
}

/** A store with its owner and a staff member holding manageSettings (and every other permission). */
async function shop() {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12, 0, 5));
  const base = serviceContext(orm, clock, {});
  const owner = await person(base);
  const staff = await person(base);
  const ownerUser = await fresh(base).em.findOneOrFail(UserSchema, { id: owner.id });
  const store = await createStore(fresh(base), ownerUser, {
    name: 'Policy Shop',
    subdomain: `pol${randomBytes(4).toString('hex')}`,
  });
  await addMember(fresh(base), store.id, {
    email: staff.email,
    permissions: ['viewOrders', 'editOrders', 'manageProducts', 'manageSettings'],
  });
  /** The membership as the guard loads it, on a request of its own. */
  const memberOf = async (userId: string) => (await findMembership(fresh(base), store.id, userId))!;
  /** The store guard for the user, as a route declaring `permission` runs it. */
  const guard = async (userId: string, permission?: 'manageSettings', ownerOnly = false) => {
    const ctx = fresh(base);
    const user = await ctx.em.findOneOrFail(UserSchema, { id: userId });
    return requireMember(ctx, user, store.id, permission, ownerOnly);
  };
  const policy = async () => (await fresh(base).em.findOneOrFail(StoreSchema, { id: store.id })).requireTwoFactor;
  return { clock, base, owner, staff, store, memberOf, guard, policy };
}

describe('who sets the rule', () => {
  it('is off by default, and a staff member with manageSettings cannot turn it on or off', async () => {
    const s = await shop();
    expect(await s.policy()).toBe(false);
    expect((await getStore(fresh(s.base), await s.memberOf(s.owner.id))).requireTwoFactor).toBe(false);
    // The route is owner-only: its guard refuses staff, whatever permissions they hold ...
    expect(await codeOf(s.guard(s.staff.id, undefined, true))).toBe('permission_missing');
    // ... and so does the rule itself, even for a staff member with two-factor sign-in on.
    await enrol(s.base, s.clock, s.staff.id);
    s.clock.advance(30_000);
    expect(
      await codeOf(setRequireTwoFactor(fresh(s.base), await s.memberOf(s.staff.id), { requireTwoFactor: true })),
    ).toBe('permission_missing');
    expect(await s.policy()).toBe(false);

    await enrol(s.base, s.clock, s.owner.id);
    await setRequireTwoFactor(fresh(s.base), await s.memberOf(s.owner.id), { requireTwoFactor: true });
    expect(
      await codeOf(setRequireTwoFactor(fresh(s.base), await s.memberOf(s.staff.id), { requireTwoFactor: false })),
    ).toBe('permission_missing');
    expect(await s.policy()).toBe(true);
  });

  it('needs the owner’s own two-factor sign-in to turn it on (not to turn it off)', async () => {
    const s = await shop();
    expect(
      await codeOf(setRequireTwoFactor(fresh(s.base), await s.memberOf(s.owner.id), { requireTwoFactor: true })),
    ).toBe('two_factor_enrolment_required');
    expect(await s.policy()).toBe(false);
    // Off stays allowed without it (nothing to lock out).
    const off = await setRequireTwoFactor(fresh(s.base), await s.memberOf(s.owner.id), { requireTwoFactor: false });
    expect(off.requireTwoFactor).toBe(false);

    await enrol(s.base, s.clock, s.owner.id);
    const on = await setRequireTwoFactor(fresh(s.base), await s.memberOf(s.owner.id), { requireTwoFactor: true });
    expect(on).toMatchObject({ id: s.store.id, requireTwoFactor: true, role: 'owner' });
    expect(await s.policy()).toBe(true);
  });
});

describe('the store guard under the rule', () => {
  it('refuses a member without two-factor sign-in until they enrol; the owner too, once they turn theirs off', async () => {
    const s = await shop();
    // Off: the staff member without two-factor sign-in is let in.
    expect((await s.guard(s.staff.id, 'manageSettings')).role).toBe('staff');

    await enrol(s.base, s.clock, s.owner.id);
    s.clock.advance(30_000);
    await setRequireTwoFactor(fresh(s.base), await s.memberOf(s.owner.id), { requireTwoFactor: true });
    expect(await codeOf(s.guard(s.staff.id))).toBe('two_factor_enrolment_required');
    expect(await codeOf(s.guard(s.staff.id, 'manageSettings'))).toBe('two_factor_enrolment_required');
    await expect(s.guard(s.staff.id)).rejects.toThrow(/Policy Shop requires two-factor sign-in/);
    expect((await s.guard(s.owner.id, 'manageSettings')).role).toBe('owner');

    // A stranger learns nothing of the rule: not a member is not a member.
    const stranger = await person(s.base);
    expect(await codeOf(s.guard(stranger.id))).toBe('store_forbidden');

    // Enrolled, the staff member passes.
    await enrol(s.base, s.clock, s.staff.id);
    expect((await s.guard(s.staff.id, 'manageSettings')).role).toBe('staff');

    // The owner who turns their own off is held to their store's rule as well.
    await disableTwoFactor(req(s.base), s.owner.id, { password: PASSWORD });
    expect(await codeOf(s.guard(s.owner.id))).toBe('two_factor_enrolment_required');
  });

  it('lets members without two-factor sign-in back in when the owner turns the rule off', async () => {
    const s = await shop();
    await enrol(s.base, s.clock, s.owner.id);
    await setRequireTwoFactor(fresh(s.base), await s.memberOf(s.owner.id), { requireTwoFactor: true });
    expect(await codeOf(s.guard(s.staff.id))).toBe('two_factor_enrolment_required');
    await setRequireTwoFactor(fresh(s.base), await s.memberOf(s.owner.id), { requireTwoFactor: false });
    expect((await s.guard(s.staff.id)).role).toBe('staff');
  });
});
