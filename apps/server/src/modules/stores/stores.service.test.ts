/** Store rules against the real database, without HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerDatabaseUrl } from '../../../../../test/support/env.js';
import { createStore, uniqueSubdomain } from '../../../../../test/support/factories.js';
import { serviceContext } from '../../../../../test/support/in-process.js';
import { openOrm, type Orm } from '../../db/orm.js';
import { AppError } from '../../lib/errors.js';
import { lookupStoreBySubdomain } from './stores.service.js';

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
