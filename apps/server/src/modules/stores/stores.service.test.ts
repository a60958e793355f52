/** Store rules against the real database, without HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore, uniqueSubdomain } from '../../../../../test/support/factories.js';
import { serviceContext } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { AppError } from '../../lib/errors.js';
import { ZMerchantUpdateStoreInput, ZUpdateStoreInput } from '@svc/schemas';
import { UserSchema } from '../identity/identity.entities.js';
import { StoreMemberSchema, StoreSchema } from './stores.entities.js';
import { createUser } from '../identity/identity.service.js';
import {
  addMember,
  createStore as createOwnedStore,
  getMerchantStore,
  listMembers,
  lookupStoreBySubdomain,
  updateMerchantStore,
  updateStore,
} from './stores.service.js';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(workerDatabaseUrl(), { poolMax: 2 });
});
afterAll(() => orm?.close());

const ctx = () => serviceContext(orm);

describe('lookupStoreBySubdomain', () => {
  it('finds a store whatever the case of the subdomain', async () => {
    const store = await createStore(orm.em.fork());
    const found = await lookupStoreBySubdomain(ctx(), { subdomain: store.subdomain.toUpperCase() });
    expect(found.id).toBe(store.id);
  });

  it('raises not_found and store_banned as AppErrors', async () => {
    await expect(lookupStoreBySubdomain(ctx(), { subdomain: uniqueSubdomain() })).rejects.toMatchObject({
      appCode: 'not_found',
    });
    const banned = await createStore(orm.em.fork(), { banned: true });
    const error = await lookupStoreBySubdomain(ctx(), { subdomain: banned.subdomain }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBe(403);
  });

  it('refuses a second store with the same subdomain at the database', async () => {
    const store = await createStore(orm.em.fork());
    await expect(createStore(orm.em.fork(), { subdomain: store.subdomain })).rejects.toThrow(/unique/i);
  });
});

describe('the store for a merchant API key', () => {
  it('reads the store without role, permissions or the ban, and changes only its name and look', async () => {
    const store = await createStore(orm.em.fork());
    const before = await getMerchantStore(ctx(), { storeId: store.id });
    expect(before).toMatchObject({ id: store.id, subdomain: store.subdomain, description: '', accentColor: null });
    expect(before).not.toHaveProperty('role');
    expect(before).not.toHaveProperty('permissions');
    expect(before).not.toHaveProperty('banned');

    const input = ZMerchantUpdateStoreInput.parse({
      storeId: store.id,
      name: '  Renamed  ',
      description: 'Fonts and icons.',
      accentColor: '#AABBCC',
    });
    const changed = await updateMerchantStore(ctx(), input);
    expect(changed).toMatchObject({ name: 'Renamed', description: 'Fonts and icons.', accentColor: '#aabbcc' });
    expect(changed.currency).toBe(before.currency);
    expect(changed.settings).toEqual(before.settings);
    expect(await getMerchantStore(ctx(), { storeId: store.id })).toEqual(changed);

    // null resets the colour; what is left out stays.
    const reset = await updateMerchantStore(ctx(), { storeId: store.id, accentColor: null });
    expect(reset).toMatchObject({ name: 'Renamed', description: 'Fonts and icons.', accentColor: null });
  });

  it('refuses what a key may not change (currency, origins, settings other than tax) and a bad colour or description', () => {
    for (const extra of [
      { currency: 'EUR' },
      { allowedOrigins: ['https://a.example'] },
      { settings: { paymentMethods: ['manual'] } },
      { settings: { receiptNote: 'x' } },
    ]) {
      expect(ZMerchantUpdateStoreInput.safeParse({ storeId: 'abc', ...extra }).success, JSON.stringify(extra)).toBe(
        false,
      );
    }
    expect(ZMerchantUpdateStoreInput.safeParse({ storeId: 'abc', accentColor: 'red' }).success).toBe(false);
    expect(ZMerchantUpdateStoreInput.safeParse({ storeId: 'abc', description: 'x'.repeat(2001) }).success).toBe(false);
  });
});

describe('members', () => {
  it('lists each member with the name they gave beside the e-mail, null without one', async () => {
    const tag = uniqueSubdomain('mem');
    const owner = await createUser(ctx(), { email: `${tag}-owner@example.test`, password: 'a long password' });
    const staff = await createUser(ctx(), { email: `${tag}-staff@example.test`, password: 'a long password' });
    const em = orm.em.fork();
    const named = await em.findOneOrFail(UserSchema, { id: staff.id });
    named.name = 'Grace Hopper';
    await em.flush();
    const store = await createOwnedStore(ctx(), await orm.em.fork().findOneOrFail(UserSchema, { id: owner.id }), {
      name: 'Members',
      subdomain: tag,
    });
    const added = await addMember(ctx(), store.id, { email: staff.email, permissions: ['viewOrders'] });
    expect(added).toMatchObject({ email: staff.email, name: 'Grace Hopper' });
    const members = await listMembers(ctx(), store.id);
    expect(members.map((m) => [m.email, m.name, m.role])).toEqual([
      [owner.email, null, 'owner'],
      [staff.email, 'Grace Hopper', 'staff'],
    ]);
  });
});

describe("a store's subscription grace days", () => {
  it('are 7 by default, change alone among the settings, and live in their own column', async () => {
    const tag = uniqueSubdomain('grace');
    const owner = await createUser(ctx(), { email: `${tag}@example.test`, password: 'a long password' });
    const store = await createOwnedStore(ctx(), await orm.em.fork().findOneOrFail(UserSchema, { id: owner.id }), {
      name: 'Grace',
      subdomain: tag,
    });
    expect(store.settings.subscriptionGraceDays).toBe(7);
    const member = await orm.em.fork().findOneOrFail(StoreMemberSchema, { store: store.id, user: owner.id });
    const changed = await updateStore(
      ctx(),
      member,
      ZUpdateStoreInput.parse({ storeId: store.id, settings: { subscriptionGraceDays: 0 } }),
    );
    expect(changed.settings).toEqual({ ...store.settings, subscriptionGraceDays: 0 });
    const row = await orm.em.fork().findOneOrFail(StoreSchema, { id: store.id });
    expect(row.subscriptionGraceDays).toBe(0);
    expect(row.settings).not.toHaveProperty('subscriptionGraceDays');
    // Another setting leaves them as they are.
    const again = await updateStore(ctx(), member, { storeId: store.id, settings: { receiptNote: 'Thanks' } });
    expect(again.settings).toMatchObject({ receiptNote: 'Thanks', subscriptionGraceDays: 0 });
  });

  it('refuse anything but a whole number of days from 0 to 30', () => {
    for (const days of [-1, 31, 1.5, '7']) {
      const input = { storeId: 'abc', settings: { subscriptionGraceDays: days } };
      expect(ZUpdateStoreInput.safeParse(input).success, String(days)).toBe(false);
    }
    expect(ZUpdateStoreInput.safeParse({ storeId: 'abc', settings: { subscriptionGraceDays: 30 } }).success).toBe(true);
  });
});

describe("a store's license lease days", () => {
  it('are 7 by default, change alone among the settings, and live in their own column', async () => {
    const tag = uniqueSubdomain('lease');
    const owner = await createUser(ctx(), { email: `${tag}@example.test`, password: 'a long password' });
    const store = await createOwnedStore(ctx(), await orm.em.fork().findOneOrFail(UserSchema, { id: owner.id }), {
      name: 'Lease',
      subdomain: tag,
    });
    expect(store.settings.licenseLeaseDays).toBe(7);
    const member = await orm.em.fork().findOneOrFail(StoreMemberSchema, { store: store.id, user: owner.id });
    const changed = await updateStore(
      ctx(),
      member,
      ZUpdateStoreInput.parse({ storeId: store.id, settings: { licenseLeaseDays: 30 } }),
    );
    expect(changed.settings).toEqual({ ...store.settings, licenseLeaseDays: 30 });
    const row = await orm.em.fork().findOneOrFail(StoreSchema, { id: store.id });
    expect(row.licenseLeaseDays).toBe(30);
    expect(row.settings).not.toHaveProperty('licenseLeaseDays');
    const again = await updateStore(ctx(), member, { storeId: store.id, settings: { receiptNote: 'Thanks' } });
    expect(again.settings).toMatchObject({ receiptNote: 'Thanks', licenseLeaseDays: 30, subscriptionGraceDays: 7 });
  });

  it('refuse anything but a whole number of days from 1 to 90', () => {
    for (const days of [0, 91, 2.5, '7']) {
      const input = { storeId: 'abc', settings: { licenseLeaseDays: days } };
      expect(ZUpdateStoreInput.safeParse(input).success, String(days)).toBe(false);
    }
    for (const days of [1, 90])
      expect(ZUpdateStoreInput.safeParse({ storeId: 'abc', settings: { licenseLeaseDays: days } }).success).toBe(true);
  });
});
