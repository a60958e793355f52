/**
 * Black-box: what the log says of a 409 that a unique constraint decided. A product whose slug the
 * store already has is refused by the database's `product_store_slug_unique`; the statement it
 * refused carries the product's paid content (its delivery instructions). The log names the
 * constraint and the table, at warning level, and never a value of the statement.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreFor, dashboard, registerSeller } from './support/seller.js';
import { startServer } from './support/server.js';

let server: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

describe('a conflict in the log', () => {
  it('names the constraint and table of a slug conflict at warning level, and none of the values', async () => {
    const seller = await registerSeller(server.url);
    const store = await createStoreFor(seller);
    const secret = `PAID-CONTENT-${randomBytes(6).toString('hex')}`;
    const product = {
      name: 'Course',
      price: 5,
      slug: `course-${randomBytes(3).toString('hex')}`,
      deliveryMethods: ['deliveryInstructions'],
      deliveryInstructions: `The download: https://files.example/${secret}`,
    };
    const path = `/api/dashboard/stores/${store.id}/products`;
    expect((await dashboard(seller, 'POST', path, product)).status).toBe(201);
    const taken = await dashboard(seller, 'POST', path, product);
    expect(taken.status).toBe(409);
    expect((await taken.json()).code).toBe('conflict');

    await server.logsSettled();
    expect(server.output()).not.toContain(secret);
    const conflict = server.logs.filter((line) => line.msg === 'conflict: the database refused the change');
    expect(conflict).toHaveLength(1);
    expect(conflict[0]).toMatchObject({
      level: 40,
      database: { sqlState: '23505', constraint: 'product_store_slug_unique', table: 'product' },
    });
    // Nothing about it at error level, and no line quotes the statement.
    expect(server.logs.filter((line) => line.level >= 50)).toEqual([]);
    expect(server.output()).not.toMatch(/insert into "product"/i);
  });
});
